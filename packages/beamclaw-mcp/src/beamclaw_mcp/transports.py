"""Open the transport a server entry names: stdio, streamable HTTP or legacy SSE.

Each transport is the SDK's own (``stdio_client``, ``streamable_http_client``,
``sse_client``): an async context manager yielding the (read, write) stream pair that a
``ClientSession`` runs on. This module only resolves configuration (secrets in ``env`` and
``headers``) and turns start-up failures into :class:`~beamclaw_mcp.errors.MCPConnectError`
(``retryable=False`` for a missing command or secret: retrying cannot fix those).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
from contextlib import AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any, TextIO

import httpx2
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client

from beamclaw_mcp.errors import MCPConnectError
from beamclaw_mcp.settings import MCPServerSettings
from beamclaw_obs import MissingSecretError, Secret

_SSE_READ_TIMEOUT = 300.0


def resolve_values(server: str, values: Mapping[str, Secret | str], what: str) -> dict[str, str]:
    """Resolve ``{ env = … }`` secrets (and plain strings) in an ``env``/``headers`` table."""
    out: dict[str, str] = {}
    for key, value in values.items():
        if isinstance(value, Secret):
            try:
                out[key] = value.resolve(used_for=f"mcp server {server!r} {what} {key}")
            except MissingSecretError as exc:
                raise MCPConnectError(server, str(exc), retryable=False) from exc
        else:
            out[key] = value
    return out


@asynccontextmanager
async def open_transport(
    settings: MCPServerSettings, *, connect_seconds: float, errlog: TextIO
) -> AsyncGenerator[tuple[Any, Any]]:
    """Start/connect the server and yield the SDK's ``(read_stream, write_stream)``.

    Args:
        settings: the server entry.
        connect_seconds: connect timeout for HTTP transports (seconds).
        errlog: where a stdio server's stderr goes (a real file: it needs a descriptor).

    Raises:
        MCPConnectError: the process could not be spawned or the endpoint reached.
    """
    transport = settings.resolved_transport
    async with AsyncExitStack() as stack:
        if transport == "stdio":
            streams = await _enter_stdio(stack, settings, errlog)
        else:
            headers = resolve_values(settings.name, settings.headers, "header")
            url = settings.url or ""
            try:
                if transport == "sse":
                    streams = await stack.enter_async_context(
                        sse_client(
                            url,
                            headers=headers,
                            timeout=connect_seconds,
                            sse_read_timeout=_SSE_READ_TIMEOUT,
                        )
                    )
                else:
                    client = await stack.enter_async_context(
                        httpx2.AsyncClient(
                            headers=headers,
                            timeout=httpx2.Timeout(connect_seconds, read=_SSE_READ_TIMEOUT),
                        )
                    )
                    streams = await stack.enter_async_context(
                        streamable_http_client(url, http_client=client)
                    )
            except (httpx2.HTTPError, OSError) as exc:
                raise MCPConnectError(
                    settings.name, f"cannot connect to {url}: {exc or type(exc).__name__}"
                ) from exc
        read_stream, write_stream = streams
        yield read_stream, write_stream


async def _enter_stdio(
    stack: AsyncExitStack, settings: MCPServerSettings, errlog: TextIO
) -> tuple[Any, Any]:
    command = settings.command or ""
    env = resolve_values(settings.name, settings.env, "env")
    cwd = settings.cwd
    if cwd is not None and not Path(cwd).is_dir():  # noqa: ASYNC240 - one stat, at start
        raise MCPConnectError(settings.name, f"cwd {cwd!r} is not a directory", retryable=False)
    params = StdioServerParameters(command=command, args=list(settings.args), env=env, cwd=cwd)
    try:
        return await stack.enter_async_context(stdio_client(params, errlog=errlog))
    except FileNotFoundError as exc:
        raise MCPConnectError(
            settings.name, f"command not found: {command}", retryable=False
        ) from exc
    except PermissionError as exc:
        raise MCPConnectError(
            settings.name, f"command not executable: {command}", retryable=False
        ) from exc
    except OSError as exc:
        raise MCPConnectError(settings.name, f"cannot start {command}: {exc}") from exc
