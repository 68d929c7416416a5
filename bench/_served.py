"""Processes a bench drives over HTTP: a fake upstream and a served ``beamclaw serve``.

Every load, stream and memory figure is taken with the client (this process), the
gateway and the fake upstream in three separate processes, the way a deployment and
the peers of ``bench/peers`` run, so the client's work is never charged to the gateway
and the gateway's RSS, file descriptors and tasks are its own (``/proc/<pid>``, and the
``beamclaw_process_asyncio_tasks`` gauge of ``/metrics``).
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

BIN = Path(sys.executable).parent
ROOT = Path(__file__).resolve().parent.parent

UPSTREAM = """
import asyncio, sys
from beamclaw_core.testing import FakeOpenAIServer, FakeReply
from bench.streaming import tokens

ANSWER_SECONDS = {answer}
TOKENS, GAP = {tokens}, {gap}

async def _first(i):
    if i == 1:
        await asyncio.sleep(ANSWER_SECONDS)

def step(request):
    if not request.body.get("stream"):
        return FakeReply("The quick brown fox jumps over the lazy dog.", delay=ANSWER_SECONDS)
    if "bench-stream" in str(request.body["messages"][-1]):
        return FakeReply(tokens=tuple(tokens(TOKENS)), delay=GAP)
    return FakeReply("The quick brown fox jumps over the lazy dog.", chunk_size=8, gate=_first)

async def main():
    async with FakeOpenAIServer([step], repeat_last=True, keep_requests=0) as server:
        print(server.base_url, flush=True)
        loop = asyncio.get_running_loop()
        while await loop.run_in_executor(None, sys.stdin.readline):
            pass

asyncio.run(main())
"""
"""The fake upstream: a non-streamed answer after ``answer`` seconds; a streamed one with
its first event after ``answer`` seconds, or, when the last message says
``bench-stream``, ``tokens`` word tokens ``gap`` seconds apart."""

HEAP_TRIM_SECONDS = 60.0
"""``[gateway] heap_trim_seconds`` of a served gateway (the default)."""
LANE_IDLE_SECONDS = 3
"""Idle session lanes leave memory after this (the default is 300 s): a census taken
``LANE_IDLE_SECONDS`` + 2 s after a load sees what the load left beyond idle lanes."""
STREAM_TOKENS = 40
STREAM_GAP_SECONDS = 0.025


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def fake_upstream(answer: float = 0.02) -> Generator[str]:
    """A fake OpenAI-compatible upstream in a child process; yields its base URL."""
    script = UPSTREAM.format(answer=answer, tokens=STREAM_TOKENS, gap=STREAM_GAP_SECONDS)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), *sys.path])}
    server = subprocess.Popen(
        [sys.executable, "-c", script],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    try:
        assert server.stdout is not None
        yield server.stdout.readline().strip()
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)


CONFIG = """
[obs]
log_level = "ERROR"
file_log_level = "ERROR"

[core]
default_provider = "fake"

[core.queue]
debounce_ms = 0

[core.maintenance]
lane_idle_seconds = {lane_idle}
check_interval_seconds = 1

[core.providers.fake]
kind = "openai"
base_url = "{url}"
model = "fake-model"
api_key = {{ env = "BENCH_FAKE_KEY" }}

[gateway]
heap_trim_seconds = {heap_trim}

[gateway.rate_limit]
per_ip = "1000000/minute"
per_loopback = "1000000/minute"
per_token = "1000000/minute"
"""


def proc_status_mb(pid: int, field: str = "VmRSS") -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def open_fds(pid: int) -> int:
    return len(os.listdir(f"/proc/{pid}/fd"))


def sockets_to(pid: int, port: int) -> int:
    """Open descriptors of ``pid`` that are established TCP connections to ``port`` on
    loopback (an HTTP client's keep-alive pool to the upstream, say)."""
    inodes: set[str] = set()
    for line in Path(f"/proc/{pid}/net/tcp").read_text().splitlines()[1:]:
        cols = line.split()
        if cols[3] == "01" and int(cols[2].rsplit(":", 1)[1], 16) == port:
            inodes.add(cols[9])
    count = 0
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        count += target.startswith("socket:[") and target[8:-1] in inodes
    return count


def tree_rss_mb(pid: int) -> float:
    """RSS of ``pid`` and every descendant (a peer that forks workers is counted whole)."""
    total = 0.0
    for child in [pid, *_descendants(pid)]:
        try:
            total += proc_status_mb(child)
        except OSError:
            continue
    return total


def _descendants(pid: int) -> list[int]:
    out: list[int] = []
    try:
        children = Path(f"/proc/{pid}/task/{pid}/children").read_text().split()
    except OSError:
        return out
    for child in map(int, children):
        out += [child, *_descendants(child)]
    return out


def wait_ready(url: str, proc: subprocess.Popen[bytes], timeout: float = 90.0) -> float:
    """Seconds until ``url`` answers 200 (raises if the process exits or time runs out)."""
    started = time.perf_counter()
    while True:
        if proc.poll() is not None:
            raise RuntimeError(f"{proc.args!r} exited with {proc.returncode}")
        if time.perf_counter() - started > timeout:
            raise RuntimeError(f"{url} not ready after {timeout:.0f} s")
        try:
            if httpx.get(url, timeout=1).status_code == 200:
                return time.perf_counter() - started
        except httpx.HTTPError:
            pass
        time.sleep(0.02)


@dataclass
class Served:
    """A running ``beamclaw serve``: its process, base URL and cold start to ``/ready``."""

    proc: subprocess.Popen[bytes]
    base_url: str
    ready_seconds: float

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def ws_url(self) -> str:
        return self.base_url.replace("http://", "ws://") + "/ws"

    def rss_mb(self) -> float:
        return proc_status_mb(self.pid)

    def fds(self) -> int:
        return open_fds(self.pid)

    def tasks(self) -> int:
        """Live asyncio tasks on the gateway's loop (``beamclaw_process_asyncio_tasks``)."""
        text = httpx.get(f"{self.base_url}/metrics", timeout=10).text
        line = next(x for x in text.splitlines() if x.startswith("beamclaw_process_asyncio_tasks "))
        return int(float(line.split()[1]))


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


_compiled: list[bool] = []


def compile_once() -> None:
    """Bytecode caches for every fresh process this run starts (see ``bench.startup``)."""
    if not _compiled:
        from bench.startup import compile_bytecode

        compile_bytecode()
        _compiled.append(True)


@contextmanager
def served_gateway(
    upstream_url: str, lane_idle: float = LANE_IDLE_SECONDS, heap_trim: float = HEAP_TRIM_SECONDS
) -> Generator[Served]:
    """``beamclaw serve`` on a free port, its only provider the fake upstream, in a
    throwaway ``BEAMCLAW_HOME``, idle lanes evicted after ``lane_idle`` seconds;
    stopped (SIGTERM) at the end of the block."""
    compile_once()
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp)
        config = CONFIG.format(url=upstream_url, lane_idle=lane_idle, heap_trim=heap_trim)
        (home / "beamclaw.toml").write_text(config)
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith("BEAMCLAW_")}
        env.update(BEAMCLAW_HOME=str(home), BEAMCLAW_PORT=str(port), BENCH_FAKE_KEY="sk-bench")
        proc = subprocess.Popen(
            [str(BIN / "beamclaw"), "serve"],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            base = f"http://127.0.0.1:{port}"
            ready = wait_ready(f"{base}/ready", proc)
            yield Served(proc, base, ready)
        finally:
            stop(proc)
