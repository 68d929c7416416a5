"""Daemon bookkeeping: the home lock, the pid file, and talking to a running gateway.

One gateway per ``BEAMCLAW_HOME``: ``serve`` holds an exclusive ``flock`` on
``$BEAMCLAW_HOME/beamclaw.lock`` for its whole life and writes its pid to
``$BEAMCLAW_HOME/beamclaw.pid``. The lock (not the pid file) is the truth: a stale pid
file left by ``kill -9`` is ignored because nobody holds the lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import signal
import subprocess
import sys
import time
from collections.abc import Generator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from beamclaw_cli.errors import BeamclawCliError, GatewayUnreachableError

LOCK_NAME = "beamclaw.lock"
PID_NAME = "beamclaw.pid"
DAEMON_LOG = "daemon.log"


class AlreadyRunningError(BeamclawCliError):
    def __init__(self, pid: int | None, home: Path) -> None:
        self.pid = pid
        who = f" (pid {pid})" if pid else ""
        super().__init__(f"BeamClaw is already running{who} with BEAMCLAW_HOME={home}")


class DaemonStartError(BeamclawCliError):
    """The background gateway exited or never became ready."""


@contextlib.contextmanager
def home_lock(home: Path) -> Generator[None]:
    """Hold the home lock and the pid file for the duration of the block."""
    home.mkdir(parents=True, exist_ok=True)
    lock_path = home / LOCK_NAME
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError as exc:
            raise AlreadyRunningError(read_pid(home), home) from exc
        pid_path = home / PID_NAME
        pid_path.write_text(f"{os.getpid()}\n")
        try:
            yield
        finally:
            with contextlib.suppress(FileNotFoundError):
                if read_pid(home) == os.getpid():
                    pid_path.unlink()
    finally:
        os.close(fd)


def read_pid(home: Path) -> int | None:
    try:
        return int((home / PID_NAME).read_text().strip())
    except (FileNotFoundError, ValueError):
        return None


def lock_held(home: Path) -> bool:
    """True when some process holds the home lock (a gateway is running)."""
    lock_path = home / LOCK_NAME
    if not lock_path.exists():
        return False
    fd = os.open(lock_path, os.O_RDWR)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    else:
        fcntl.flock(fd, fcntl.LOCK_UN)
        return False
    finally:
        os.close(fd)


def running_pid(home: Path) -> int | None:
    """The pid of the running gateway, or None when none runs."""
    return read_pid(home) if lock_held(home) else None


@dataclass(frozen=True)
class Endpoint:
    host: str
    port: int

    @property
    def base_url(self) -> str:
        wildcard = ("0.0.0.0", "")  # noqa: S104 - mapping a wildcard bind to a dialable address
        host = "127.0.0.1" if self.host in wildcard else self.host
        host = "[::1]" if host == "::" else (f"[{host}]" if ":" in host else host)
        return f"http://{host}:{self.port}"


def fetch_json(endpoint: Endpoint, path: str, timeout: float = 2.0) -> tuple[int, Any]:
    """GET a JSON route of a running gateway: (status, decoded body).

    The standard library's client, not httpx: ``status`` and the start-up wait only need
    one local GET, and httpx (with the rich console its CLI helper imports) costs more than
    the rest of ``beamclaw status``. Raises :class:`GatewayUnreachableError` when nothing
    answers, ``ValueError`` when the body is not JSON.
    """
    import http.client
    import json

    host = endpoint.base_url.removeprefix("http://").rsplit(":", 1)[0].strip("[]")
    conn = http.client.HTTPConnection(host, endpoint.port, timeout=timeout)
    try:
        conn.request("GET", path, headers={"Accept": "application/json"})
        response = conn.getresponse()
        raw = response.read()
    except (OSError, http.client.HTTPException) as exc:
        raise GatewayUnreachableError(f"no gateway at {endpoint.base_url}: {exc}") from exc
    finally:
        conn.close()
    return response.status, json.loads(raw)


def spawn_gateway(home: Path, args: list[str], env: dict[str, str]) -> subprocess.Popen[bytes]:
    """Start ``beamclaw serve`` detached, output appended to ``logs/daemon.log``."""
    logs = home / "logs"
    logs.mkdir(parents=True, exist_ok=True)
    out = (logs / DAEMON_LOG).open("ab")
    exe = Path(sys.executable).parent / "beamclaw"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "beamclaw_cli"]
    return subprocess.Popen(
        [*cmd, "serve", *args],
        stdin=subprocess.DEVNULL,
        stdout=out,
        stderr=out,
        env=env,
        start_new_session=True,
        close_fds=True,
    )


def wait_ready(proc: subprocess.Popen[bytes], endpoint: Endpoint, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            raise DaemonStartError(f"the gateway exited during start-up (exit code {code})")
        try:
            status, _ = fetch_json(endpoint, "/ready", timeout=1.0)
            if status == 200:
                return
        except (GatewayUnreachableError, ValueError):
            pass
        time.sleep(0.1)
    raise DaemonStartError(f"the gateway did not become ready within {timeout:g}s")


def stop_pid(pid: int, home: Path, timeout: float) -> bool:
    """SIGTERM, wait for the lock to be released; SIGKILL after ``timeout``.

    Returns True when the process stopped gracefully, False when it had to be killed.
    """
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if not lock_held(home):
            return True
        time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    for _ in range(50):
        if not lock_held(home):
            break
        time.sleep(0.1)
    with contextlib.suppress(FileNotFoundError):
        (home / PID_NAME).unlink()
    return False


def tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except FileNotFoundError:
        return ""
