"""Startup: CLI command times, package import time, cold start to /ready, idle RSS.

Every figure is a median over rounds of a fresh process, next to ``python -c pass``
measured in the same run (the interpreter's own floor). Commands run against a throwaway
``BEAMCLAW_HOME`` with no daemon (``status`` answers "not running"). Cold start is the wall
time from launching ``beamclaw serve`` to the first 200 from ``/ready``, and, launched
again (the two launches alternate), to the first 200 from an API route (``/v1/models``:
the front API is built once the server listens, or by that request); idle RSS is the
served gateway's ``VmRSS`` once ready. Run it with bytecode caches in place (``python -m
compileall``): under ``PYTHONDONTWRITEBYTECODE`` with none compiled every import recompiles
its source and the figures measure the compiler; the run writes them first.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx

from bench.common import median

ROUNDS = 5
SERVE_ROUNDS = 5
"""Launches of ``beamclaw serve`` per figure: a launch varies by ±0.3 s on the shared
2-core machine, which three did not median out."""
API_PATH = "/v1/models"
"""What a client asks first when it starts with the API (``serve_to_first_api_seconds``):
the gateway answers its probes before it has built the API, so ``/ready`` alone would not
show what the first real request waits for."""
BIN = Path(sys.executable).parent
COMMANDS: dict[str, list[str]] = {
    "help": ["--help"],
    "version": ["version"],
    "status": ["status"],
    "agent_list": ["agent", "list"],
}


def _env(home: Path, port: int) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("BEAMCLAW_")}
    env.update(BEAMCLAW_HOME=str(home), BEAMCLAW_PORT=str(port))
    return env


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _wall(argv: list[str], env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=False, timeout=120)
    return time.perf_counter() - started


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _cold_start(env: dict[str, str], port: int, path: str = "/ready") -> tuple[float, float]:
    """Seconds from launching ``beamclaw serve`` to the first 200 on ``path``, and its RSS
    (MB) then."""
    started = time.perf_counter()
    proc = subprocess.Popen(
        [str(BIN / "beamclaw"), "serve"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"beamclaw serve exited with {proc.returncode}")
            if time.perf_counter() - started > 60:
                raise RuntimeError("beamclaw serve not ready after 60 s")
            try:
                if httpx.get(f"http://127.0.0.1:{port}{path}", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.02)
        ready = time.perf_counter() - started
        time.sleep(0.5)  # let startup work settle before sampling idle memory
        return ready, _rss_mb(proc.pid)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def compile_bytecode() -> None:
    """Write the bytecode caches a normal install has after its first run.

    With ``PYTHONDONTWRITEBYTECODE`` set (as on the development machines) and no caches,
    every fresh process would recompile every module it imports, and the figures would
    measure the compiler; ``compileall`` writes them whatever that variable says.
    """
    roots = [str(Path(p)) for p in sys.path if p.endswith("site-packages")]
    roots.append(str(Path(__file__).resolve().parent.parent / "packages"))
    subprocess.run(
        [sys.executable, "-m", "compileall", "-q", "-j", "0", *roots],
        capture_output=True,
        check=False,
        timeout=600,
    )


def run() -> dict[str, Any]:
    result: dict[str, Any] = {}
    compile_bytecode()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        env = _env(home, _free_port())
        python = [sys.executable]
        base = median([_wall([*python, "-c", "pass"], env) for _ in range(ROUNDS)])
        result["python_c_pass_seconds"] = base
        for name, args in COMMANDS.items():
            argv = [str(BIN / "beamclaw"), *args]
            t = median([_wall(argv, env) for _ in range(ROUNDS)])
            result[f"cli_{name}_seconds"] = t
            result[f"cli_{name}_x_baseline"] = t / base
        for module in ("beamclaw_cli.app", "beamclaw_core", "beamclaw_gateway.server"):
            argv = [*python, "-c", f"import {module}"]
            t = median([_wall(argv, env) for _ in range(ROUNDS)])
            result[f"import_{module}_seconds"] = t
        readies: list[float] = []
        rss: list[float] = []
        firsts: list[float] = []
        for _ in range(SERVE_ROUNDS):  # the two launches alternate: the same machine load
            port = _free_port()
            ready, mb = _cold_start(_env(home, port), port)
            readies.append(ready)
            rss.append(mb)
            port = _free_port()  # a client whose first request needs the API
            firsts.append(_cold_start(_env(home, port), port, API_PATH)[0])
        result["serve_to_ready_seconds"] = median(readies)
        result["serve_idle_rss_mb"] = median(rss)
        result["serve_to_first_api_seconds"] = median(firsts)
    result["rounds"] = ROUNDS
    result["serve_rounds"] = SERVE_ROUNDS
    return result
