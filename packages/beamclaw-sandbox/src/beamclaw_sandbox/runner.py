"""One script run inside a running container (blocking; callers use a worker thread).

The script reaches the container on the exec's stdin (the root file system stays
read-only): a small ``sh`` wrapper copies it to a private file in ``/tmp`` (``noexec``
does not matter, the interpreter reads it), runs it under coreutils ``timeout`` (which
signals the script's whole process group: ``TERM``, then ``KILL`` a second later),
records that group's id and removes the files. After a timeout the host kills the group
once more from a second exec, so nothing of the run survives (a fork bomb outruns
``timeout``'s own signals). The host keeps its own deadline (``timeout`` +
:data:`HOST_GRACE`): a run still not finished then is reported ``hung`` and the caller
removes the container.
"""

from __future__ import annotations

import socket
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from beamclaw_sandbox.errors import ContainerError
from beamclaw_sandbox.recipe import SANDBOX_UID, WORKDIR
from beamclaw_sandbox.streams import STDERR, STDOUT, CappedCapture, FrameReader

if TYPE_CHECKING:
    import docker

Language = Literal["python", "bash"]
INTERPRETERS: dict[Language, str] = {"python": "python3", "bash": "bash"}
HOST_GRACE = 5.0
TIMEOUT_STATUSES = (124, 137)
"""coreutils ``timeout``'s status after a ``TERM`` (124) or a ``KILL`` (137)."""

WRAPPER = r"""umask 077
f=$(mktemp /tmp/script.XXXXXXXX) || exit 125
cat >"$f" || exit 125
timeout -k 1 "$2" "$1" "$f" &
echo "$!" >"$3"
wait "$!"
s=$?
rm -f "$f"
case $s in 124|137) ;; *) rm -f "$3" ;; esac
exit $s
"""
KILL_GROUP = r"""read p <"$1" || exit 0
kill -KILL "-$p" 2>/dev/null
exit 0
"""
"""Kills a timed-out run's process group without forking (a fork bomb leaves no PID)."""
CLEANUP_ATTEMPTS = 25
"""Tries of the clean-up exec (it cannot start while a fork bomb holds every PID)."""


@dataclass(frozen=True)
class RunOutcome:
    """What a run produced. ``exit_status`` is None when it hung past the host deadline."""

    exit_status: int | None
    stdout: str
    stderr: str
    stdout_bytes: int
    stderr_bytes: int
    timed_out: bool
    hung: bool
    """Still running at the host deadline."""
    seconds: float
    leftovers: bool = False
    """Processes of a timed-out run could not be killed (the caller replaces the
    container)."""


def exec_command(language: Language, timeout: float, group_file: str) -> list[str]:
    """The exec's argv: the wrapper, the interpreter, the timeout, the group id's file."""
    return ["sh", "-c", WRAPPER, "sandbox", INTERPRETERS[language], f"{timeout:g}", group_file]


def run_script(
    client: docker.DockerClient,
    container_id: str,
    script: bytes,
    language: Language,
    timeout: float,
    keep_bytes: int,
    environment: Mapping[str, str] | None = None,
) -> RunOutcome:
    """Run ``script`` in the container and wait for it (at most ``timeout`` + grace).

    Raises:
        ContainerError: the engine could not start the script (container gone).
    """
    api = client.api
    started = time.monotonic()
    group_file = f"/tmp/run-{uuid.uuid4().hex}.pgid"  # noqa: S108 - inside the container
    import docker.errors

    try:
        created: dict[str, Any] = api.exec_create(
            container_id,
            exec_command(language, timeout, group_file),
            stdin=True,
            stdout=True,
            stderr=True,
            user=f"{SANDBOX_UID}:{SANDBOX_UID}",
            workdir=WORKDIR,
            environment=dict(environment or {}),
        )
        exec_id = str(created["Id"])
        handle = api.exec_start(exec_id, socket=True)
    except docker.errors.DockerException as e:
        raise ContainerError(container_id[:12], f"could not start the script: {e}") from e
    raw = _raw_socket(handle)
    out, err = CappedCapture(keep_bytes), CappedCapture(keep_bytes)
    hung = False
    deadline = started + timeout + HOST_GRACE
    try:
        raw.sendall(script)
        raw.shutdown(socket.SHUT_WR)
        reader = FrameReader()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                hung = True
                break
            raw.settimeout(remaining)
            try:
                data = raw.recv(65536)
            except TimeoutError:
                hung = True
                break
            if not data:
                break
            for stream, payload in reader.feed(data):
                if stream == STDOUT:
                    out.add(payload)
                elif stream == STDERR:
                    err.add(payload)
    finally:
        handle.close()
        raw.close()
    seconds = time.monotonic() - started
    status: int | None = None
    if not hung:
        status = _exit_code(api, exec_id)
    timed_out = hung or (status in TIMEOUT_STATUSES and seconds >= timeout)
    leftovers = hung or (timed_out and not _kill_group(api, container_id, group_file))
    return RunOutcome(
        exit_status=status,
        stdout=out.text(),
        stderr=err.text(),
        stdout_bytes=out.total,
        stderr_bytes=err.total,
        timed_out=timed_out,
        hung=hung,
        seconds=seconds,
        leftovers=leftovers,
    )


def _raw_socket(handle: object) -> socket.socket:
    # over a Unix socket the SDK hands back a SocketIO wrapping the connection
    raw = getattr(handle, "_sock", handle)
    if not isinstance(raw, socket.socket):
        raise TypeError(f"unexpected exec stream {type(handle).__name__}")
    return raw


def _kill_group(api: Any, container_id: str, group_file: str) -> bool:
    import docker.errors

    user = f"{SANDBOX_UID}:{SANDBOX_UID}"
    for _ in range(CLEANUP_ATTEMPTS):
        try:
            created: dict[str, Any] = api.exec_create(
                container_id, ["sh", "-c", KILL_GROUP, "sandbox", group_file], user=user
            )
            api.exec_start(created["Id"])
            if _exit_code(api, str(created["Id"])) == 0:
                return True
        except docker.errors.APIError:
            pass  # the engine could not start it
        time.sleep(0.1)  # no PID free yet: the group is still forking
    return False


def _exit_code(api: Any, exec_id: str) -> int | None:
    # the stream can close a moment before the engine records the exit code
    for _ in range(50):
        info: dict[str, Any] = api.exec_inspect(exec_id)
        if not info.get("Running") and info.get("ExitCode") is not None:
            return int(info["ExitCode"])
        time.sleep(0.02)
    return None
