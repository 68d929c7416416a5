"""Running a child process safely: own process group, whole group killed, capped output.

Invariants of :func:`run_process`:

* the child starts a new session, so it leads its own process group;
* on timeout, on cancellation of the awaiting task and after a normal exit, the whole
  group receives SIGKILL (stragglers left in the background do not survive the call);
* output (stdout and stderr interleaved) is kept as a head and a tail of bounded size;
  memory use does not grow with the amount a command prints.
* the environment is the parent's minus configured and secret-looking variables.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from beamclaw_obs import scrub
from beamclaw_tools.output import truncation_marker

SECRET_NAME = re.compile(
    r"(?i)(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|PRIVATE|COOKIE|SESSION|DSN|DATABASE_URL)"
)
"""Variable names that look like they hold secrets; removed from a child's environment."""


def child_environment(
    strip: Iterable[str] = (),
    keep: Iterable[str] = (),
    base: Mapping[str, str] | None = None,
) -> dict[str, str]:
    """The environment a tool's child process gets.

    Removed: names in ``strip``; names matching :data:`SECRET_NAME`; any variable whose
    value the scrubber would redact (a registered secret value or a known key format).
    Names in ``keep`` survive the two heuristics, never an explicit ``strip``.
    """
    source = os.environ if base is None else base
    stripped = {s.upper() for s in strip}
    kept = {k.upper() for k in keep}
    env: dict[str, str] = {}
    for name, value in source.items():
        upper = name.upper()
        if upper in stripped:
            continue
        if upper not in kept and (SECRET_NAME.search(name) or scrub(value) != value):
            continue
        env[name] = value
    return env


class CappedBuffer:
    """Keeps the first ``head`` and last ``tail`` bytes of a stream and counts the rest."""

    def __init__(self, head: int, tail: int) -> None:
        self._head_limit = head
        self._tail_limit = tail
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def feed(self, chunk: bytes) -> None:
        self.total += len(chunk)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head.extend(chunk[:room])
            chunk = chunk[room:]
        if chunk and self._tail_limit > 0:
            self._tail.extend(chunk)
            if len(self._tail) > self._tail_limit:
                del self._tail[: len(self._tail) - self._tail_limit]

    def text(self) -> str:
        head = self._head.decode("utf-8", errors="replace")
        kept = len(self._head) + len(self._tail)
        if kept >= self.total:
            return head + self._tail.decode("utf-8", errors="replace")
        marker = truncation_marker(self.total - kept, self.total)
        return f"{head}\n{marker}\n{self._tail.decode('utf-8', errors='replace')}"


@dataclass(frozen=True)
class ProcessResult:
    """What a finished (or killed) process produced."""

    exit_status: int | None
    output: str
    timed_out: bool


_DRAIN_SECONDS = 5.0
"""How long to wait for the pipe to close after the group was killed (a child that left
the group with ``setsid`` may hold it open; its output is then abandoned)."""


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


async def _pump(stream: asyncio.StreamReader, buffer: CappedBuffer) -> None:
    while chunk := await stream.read(65536):
        buffer.feed(chunk)


async def run_process(
    argv: Sequence[str],
    *,
    cwd: Path,
    env: Mapping[str, str],
    timeout_seconds: float,
    max_output_chars: int,
) -> ProcessResult:
    """Run ``argv`` in its own process group; see the module invariants."""
    buffer = CappedBuffer(head=max_output_chars * 2 // 3, tail=max_output_chars // 3)
    # Our own pipe: asyncio's Process.wait() would otherwise also wait for every holder
    # of its stdout pipe (a background straggler) instead of the process itself.
    read_fd, write_fd = os.pipe()
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            env=dict(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=write_fd,
            stderr=write_fd,
            start_new_session=True,
        )
    except BaseException:
        os.close(read_fd)
        raise
    finally:
        os.close(write_fd)
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=2**20)
    transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), os.fdopen(read_fd, "rb", buffering=0)
    )
    pump = asyncio.create_task(_pump(reader, buffer))
    timed_out = False
    try:
        try:
            async with asyncio.timeout(timeout_seconds):
                await proc.wait()
        except TimeoutError:
            timed_out = True
    finally:
        # Normal exit, timeout or cancellation: nothing of the group outlives the call.
        _kill_group(proc.pid)
        if proc.returncode is None:
            await proc.wait()
        try:
            async with asyncio.timeout(_DRAIN_SECONDS):
                await pump
        except TimeoutError:
            pump.cancel()
        finally:
            transport.close()
    return ProcessResult(
        exit_status=None if timed_out else proc.returncode,
        output=buffer.text(),
        timed_out=timed_out,
    )
