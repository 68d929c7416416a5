"""Gateway nodes as real ``beamclaw serve`` processes sharing PostgreSQL and Redis.

Each node has its own ``BEAMCLAW_HOME`` (one gateway per home holds its lock) and the same
``[memory] database_url`` and ``[cluster]`` Redis; they talk to one fake OpenAI server.
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
LEASE_SECONDS = 3.0


def service_url(var: str) -> str:
    """A test service's URL from the environment (``.test-services/env``), as the root
    conftest's fixtures read it (those are function-scoped; the nodes live per module)."""
    url = os.environ.get(var)
    if not url:
        import pytest

        pytest.fail(f"{var} is not set: cluster tests need the real server `make test` starts")
    return url


def free_ports(count: int) -> list[int]:
    """``count`` distinct free ports (all held open while chosen, so none repeats)."""
    sockets = [socket.socket() for _ in range(count)]
    try:
        for s in sockets:
            s.bind(("127.0.0.1", 0))
        return [int(s.getsockname()[1]) for s in sockets]
    finally:
        for s in sockets:
            s.close()


def telegram_config(api_base_url: str, token: str) -> str:
    """The Telegram channel in long-polling mode against a fake Bot API."""
    return f"""
[gateway.channels.telegram]
enabled = true
token = "{token}"
api_base_url = "{api_base_url}"
dm_policy = "open"
poll_timeout_seconds = 1
"""


def node_config(
    *,
    port: int,
    node_id: str,
    database_url: str,
    redis_url: str,
    prefix: str,
    llm: str,
    extra: str = "",
) -> str:
    return (
        extra
        + f"""
[memory]
database_url = "{database_url}"
[core]
default_provider = "fake"
[core.providers.fake]
kind = "openai"
base_url = "{llm}"
model = "fake-model"
[core.queue]
debounce_ms = 0
mode = "collect"
[scheduler]
enabled = true
tick_seconds = 0.2
[gateway.http]
port = {port}
trust_forwarded_for = true
[gateway.rate_limit]
storage_uri = "{redis_url}"
per_ip = "6/minute"
[cluster]
enabled = true
node_id = "{node_id}"
redis_url = "{redis_url}"
lease_seconds = {LEASE_SECONDS}
key_prefix = "{prefix}"
[obs]
log_level = "INFO"
"""
    )


class Node:
    """One gateway process."""

    def __init__(self, root: Path, name: str, config: str, port: int) -> None:
        self.name = name
        self.home = root / name
        self.home.mkdir(parents=True, exist_ok=True)
        (self.home / "beamclaw.toml").write_text(config, encoding="utf-8")
        self.base_url = f"http://127.0.0.1:{port}"
        self.log = root / f"{name}.log"
        self.env = {
            **os.environ,
            "BEAMCLAW_HOME": str(self.home),
            "BEAMCLAW_CONFIG": str(self.home / "beamclaw.toml"),
        }
        self.proc: subprocess.Popen[bytes] | None = None

    def spawn(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [str(BEAMCLAW), "serve"], env=self.env, stdout=out, stderr=out
            )

    async def ready(self, seconds: float = 90) -> None:
        deadline = time.monotonic() + seconds
        async with httpx.AsyncClient(base_url=self.base_url, timeout=5) as client:
            while time.monotonic() < deadline:
                assert self.proc is not None
                code = self.proc.poll()
                assert code is None, f"{self.name} exited ({code}):\n{self.log.read_text()}"
                try:
                    if (await client.get("/ready")).status_code == 200:
                        return
                except httpx.TransportError:
                    pass
                await asyncio.sleep(0.1)
        raise AssertionError(f"{self.name} not ready in time:\n{self.log.read_text()}")

    def kill_9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            finally:
                if self.proc.poll() is None:
                    self.proc.kill()
