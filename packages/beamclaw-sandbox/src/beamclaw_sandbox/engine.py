"""The Docker engine connection: the only place a ``docker.DockerClient`` is made.

Every call here blocks (the SDK is synchronous); async callers run them in a worker
thread. :func:`connect` turns the SDK's failures into a :class:`DockerUnavailableError`
whose ``reason`` a person can act on (not running, no permission, not installed).
"""

from __future__ import annotations

import os
import socket
from typing import TYPE_CHECKING

from beamclaw_sandbox.errors import DockerUnavailableError

if TYPE_CHECKING:
    import docker

DEFAULT_SOCKET = "unix:///var/run/docker.sock"
API_VERSION = "1.41"
"""Engine API version spoken (Docker 20.10 and later); fixed, so making a client does not
open a connection of its own (the ping is the one check)."""


def engine_url(configured: str | None) -> str:
    """The engine address: ``configured``, else ``$DOCKER_HOST``, else the local socket."""
    return configured or os.environ.get("DOCKER_HOST") or DEFAULT_SOCKET


def unavailable_reason(url: str, error: BaseException) -> str:
    """A one-line, actionable reason for a failed connection to ``url``."""
    text = str(error)
    socket_path = url.removeprefix("unix://") if url.startswith("unix://") else None
    if socket_path is not None:
        if not os.path.exists(socket_path):
            return f"no Docker socket at {socket_path} (is dockerd running?)"
        if "Permission denied" in text or isinstance(error, PermissionError):
            return (
                f"permission denied on {socket_path} "
                "(add this user to the docker group, or run as root)"
            )
        if "Connection refused" in text:
            return f"nothing answers on {socket_path} (is dockerd running?)"
    return f"the engine at {url} does not answer: {text}"


def _probe_socket(address: str) -> None:
    # the SDK leaks the socket of a failed Unix connection: try it with one we close
    path = address.removeprefix("unix://")
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(5)
        try:
            probe.connect(path)
        except OSError as e:
            raise DockerUnavailableError(unavailable_reason(address, e)) from e


def connect(url: str | None, *, timeout: float = 60.0) -> docker.DockerClient:
    """A client for the engine at ``url`` (see :func:`engine_url`), checked by a ping.

    Raises:
        DockerUnavailableError: the SDK is missing or the engine does not answer.
    """
    try:
        import docker
        import docker.errors
    except ImportError as e:  # pragma: no cover - docker is a declared dependency
        raise DockerUnavailableError("the docker Python package is not installed") from e
    address = engine_url(url)
    if address.startswith("unix://"):
        _probe_socket(address)
    try:
        client = docker.DockerClient(base_url=address, version=API_VERSION, timeout=int(timeout))
    except docker.errors.DockerException as e:
        raise DockerUnavailableError(unavailable_reason(address, e)) from e
    try:
        client.ping()
    except (docker.errors.DockerException, OSError) as e:
        client.close()
        raise DockerUnavailableError(unavailable_reason(address, e)) from e
    return client
