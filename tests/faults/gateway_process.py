"""A real ``beamclaw serve`` child process for the fault suite.

:class:`GatewayProcess` writes a config file, starts the gateway on a free port with its
own ``BEAMCLAW_HOME`` (and, optionally, ``BEAMCLAW_DATABASE_URL``), waits for ``/ready``,
and can be stopped with SIGTERM or killed with SIGKILL at any moment. It reads the
process's open file descriptors and RSS from ``/proc`` and the gateway's asyncio task
count from ``/metrics``; every restart appends to the same log file, whose tail an
assertion shows.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx

BEAMCLAW = Path(sys.executable).with_name("beamclaw")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def base_config(base_url: str, port: int, *, max_attempts: int = 1) -> str:
    """The provider ``fake`` at ``base_url``, full autonomy, no debounce, quiet logs."""
    return f"""
[core]
default_provider = "fake"
autonomy_level = "full"
[core.providers.fake]
kind = "openai"
base_url = "{base_url}"
model = "fake-model"
[core.queue]
debounce_ms = 0
[core.agentic_loop]
max_attempts = {max_attempts}
retry_base_delay_seconds = 0.05
retry_max_delay_seconds = 0.2
[gateway.http]
port = {port}
[obs]
log_level = "WARNING"
"""


class GatewayProcess:
    """One gateway home, started and killed as often as a test likes."""

    def __init__(
        self,
        root: Path,
        config: str,
        port: int,
        *,
        database_url: str | None = None,
        env: dict[str, str] | None = None,
        home: Path | None = None,
    ) -> None:
        root.mkdir(parents=True, exist_ok=True)
        self.port = port
        self.home = home or root / "home"
        self.log = root / "gateway.log"
        self.config = root / "beamclaw.toml"
        self.config.write_text(config, encoding="utf-8")
        self.env = {
            **os.environ,
            **(env or {}),
            "BEAMCLAW_HOME": str(self.home),
            "BEAMCLAW_CONFIG": str(self.config),
        }
        if database_url is not None:
            self.env["BEAMCLAW_DATABASE_URL"] = database_url
        self.proc: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def pid(self) -> int:
        assert self.proc is not None, "the gateway is not running"
        return self.proc.pid

    def client(self, timeout: float = 30) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.url, timeout=timeout)

    def log_tail(self, chars: int = 4000) -> str:
        return self.log.read_text(errors="replace")[-chars:] if self.log.exists() else ""

    async def start(self, timeout: float = 120) -> None:
        """Start the process and wait until ``/ready`` answers 200."""
        assert self.proc is None or self.proc.poll() is not None, "already running"
        with self.log.open("ab") as out:
            out.write(f"\n===== start {self.starts} =====\n".encode())
            out.flush()
            self.proc = subprocess.Popen(
                [str(BEAMCLAW), "serve"], env=self.env, stdout=out, stderr=out
            )
        self.starts += 1
        deadline = time.monotonic() + timeout
        async with self.client(timeout=5) as client:
            while time.monotonic() < deadline:
                assert self.proc.poll() is None, self.log_tail()
                try:
                    if (await client.get("/ready")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.05)
        raise AssertionError(f"gateway not ready in {timeout} s\n{self.log_tail()}")

    def kill9(self) -> None:
        """SIGKILL, then reap."""
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGKILL)
            self.proc.wait(10)

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not exited within 30 s."""
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.kill9()

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def open_fds(self) -> int:
        """File descriptors the gateway process holds right now (``/proc/<pid>/fd``)."""
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def rss_bytes(self) -> int:
        """Resident set size of the gateway process (``VmRSS`` of ``/proc/<pid>/status``)."""
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        raise AssertionError("no VmRSS line")

    async def asyncio_tasks(self, client: httpx.AsyncClient) -> int:
        """The gateway's live asyncio tasks, from its ``/metrics`` (the scrape's own
        request task included)."""
        text = (await client.get("/metrics")).text
        for line in text.splitlines():
            if line.startswith("beamclaw_process_asyncio_tasks "):
                return int(float(line.split()[1]))
        raise AssertionError("/metrics has no beamclaw_process_asyncio_tasks")
