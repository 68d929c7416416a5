"""One configured MCP server: a long-lived ``ClientSession`` and the calls made on it.

:meth:`ServerConnection.run` is the body of a supervised child. One run = one connection:
open the transport, ``initialize`` → ``initialized`` → ``tools/list`` (every page), publish
the tools, then serve until the connection ends — the stream closes (process exit, HTTP
stream end), a ping fails, or the host stops it. ``notifications/tools/list_changed``
triggers a re-list and a re-publish. A run never returns normally while the server is
meant to be up: it raises a :class:`~beamclaw_mcp.errors.BeamclawMCPError` saying why it
ended, and the supervisor restarts it (exponential backoff, restart intensity). A failure
retrying cannot fix (missing command or secret) marks the server ``failed`` at once.

Calls (:meth:`call_tool`) run on the caller's task. A server that is not ``up`` fails the
call immediately with :class:`~beamclaw_mcp.errors.MCPServerUnavailableError`; a lost
connection, a timeout (after which the SDK sends ``notifications/cancelled``) and protocol
errors each raise their own typed error.

Between the transport and the session sits a pump that forwards messages unchanged; it is
how the connection learns that the stream ended and that the server wrote something that
is not JSON-RPC.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from typing import IO, Any, TextIO, cast

import anyio
import mcp.types as mt
from anyio.streams.memory import MemoryObjectSendStream
from mcp import ClientSession
from mcp.shared.exceptions import MCPError
from mcp.shared.message import SessionMessage
from pydantic import ValidationError

from beamclaw_mcp._version import __version__
from beamclaw_mcp.content import to_tool_output
from beamclaw_mcp.errors import (
    BeamclawMCPError,
    MCPCallTimeoutError,
    MCPConnectError,
    MCPConnectionLostError,
    MCPHandshakeError,
    MCPProtocolError,
    MCPServerUnavailableError,
    MCPUnknownToolError,
)
from beamclaw_mcp.settings import MCPServerSettings, MCPSettings
from beamclaw_mcp.transports import open_transport
from beamclaw_mcp.types import RemoteTool, ServerState, ServerStatus
from beamclaw_obs import EventType, emit, scrub
from beamclaw_tools import ToolOutput

MAX_TOOL_PAGES = 100
"""A server whose ``tools/list`` paginates beyond this is cut off (a runaway cursor)."""
_STDERR_TAIL = 600
_CLIENT_INFO = mt.Implementation(name="beamclaw", version=__version__)

ToolsCallback = Callable[[str, list[RemoteTool] | None], None]
"""Called with the server's tools whenever they (re)appear or change; ``None`` = gone."""


class ServerConnection:
    """Connection lifecycle and calls for one server entry.

    Args:
        settings: the server entry.
        defaults: the ``[mcp]`` section (timeouts, caps, ping interval).
        on_tools: receives the tool list on every successful (re)handshake and refresh,
            and ``None`` when the server is failed or stopped (its tools should vanish).
    """

    def __init__(
        self, settings: MCPServerSettings, defaults: MCPSettings, on_tools: ToolsCallback
    ) -> None:
        self.settings = settings
        self.name = settings.name
        self.initialize_timeout = (
            settings.initialize_timeout_seconds or defaults.initialize_timeout_seconds
        )
        self.call_timeout = settings.call_timeout_seconds or defaults.call_timeout_seconds
        self.ping_interval = defaults.ping_interval_seconds
        self.max_result_chars = settings.max_result_chars or defaults.max_result_chars
        self.max_image_bytes = defaults.max_image_bytes
        self._on_tools = on_tools
        self._state = ServerState.STARTING if settings.enabled else ServerState.DISABLED
        self._since = time.time()
        self._runs = 0
        self._restarts = 0
        self._last_error: str | None = None
        self._tools: dict[str, RemoteTool] = {}
        self._session: ClientSession | None = None
        self._server_info: mt.Implementation | None = None
        self._protocol_version: str | None = None
        self._wake = asyncio.Event()
        self._closed_reason: str | None = None
        self._refresh_requested = False
        self._bad_message: str | None = None
        self._up_event = asyncio.Event()

    # ------------------------------------------------------------------ status

    @property
    def state(self) -> ServerState:
        return self._state

    @property
    def tools(self) -> dict[str, RemoteTool]:
        """The tools the server offered at the last listing (remote name → tool)."""
        return dict(self._tools)

    def status(self) -> ServerStatus:
        info = self._server_info
        return ServerStatus(
            name=self.name,
            transport=self.settings.resolved_transport,
            state=self._state,
            tool_count=len(self._tools),
            restarts=self._restarts,
            last_error=self._last_error,
            server_name=info.name if info else None,
            server_version=info.version if info else None,
            protocol_version=self._protocol_version,
            since=self._since,
            tools=tuple(sorted(self._tools)),
        )

    def settled(self) -> bool:
        """True once the server is up, failed, disabled or stopped (not still trying)."""
        return self._state not in (ServerState.STARTING, ServerState.RESTARTING)

    def _set_state(self, state: ServerState) -> None:
        if state is not self._state:
            self._state = state
            self._since = time.time()

    def mark_failed(self, error: BaseException | None) -> None:
        """The supervisor gave up (or retrying cannot help): stop offering the tools."""
        if error is not None:
            self._last_error = _describe(error)
        self._set_state(ServerState.FAILED)
        self._session = None
        self._tools = {}
        self._on_tools(self.name, None)
        emit(EventType.MCP_SERVER_DOWN, server=self.name, state="failed", error=self._last_error)

    def mark_stopped(self) -> None:
        self._set_state(ServerState.STOPPED)
        self._session = None
        self._tools = {}
        self._on_tools(self.name, None)

    # ------------------------------------------------------------------ run

    async def run(self) -> None:
        """One connection attempt, supervised (see the module docstring)."""
        if self._runs:
            self._restarts += 1
            self._set_state(ServerState.RESTARTING)
        self._runs += 1
        self._closed_reason = None
        self._bad_message = None
        self._refresh_requested = False
        self._wake.clear()
        with tempfile.TemporaryFile("w+b") as errlog:
            try:
                outcome = await self._connect_and_serve(cast(TextIO, errlog))
            finally:
                self._session = None
            stderr_tail = _tail(errlog)
        self._last_error = _describe(outcome)
        if stderr_tail and not isinstance(outcome, MCPConnectError):
            self._last_error = f"{self._last_error} [stderr: {stderr_tail}]"
        if isinstance(outcome, MCPConnectError) and not outcome.retryable:
            self.mark_failed(None)
            return
        self._set_state(ServerState.RESTARTING)
        emit(
            EventType.MCP_SERVER_DOWN,
            server=self.name,
            state="restarting",
            error=self._last_error,
        )
        raise outcome

    async def _connect_and_serve(self, errlog: TextIO) -> BeamclawMCPError:
        outcome: BeamclawMCPError = MCPConnectionLostError(self.name, "session ended")
        try:
            async with open_transport(
                self.settings, connect_seconds=self.initialize_timeout, errlog=errlog
            ) as (read_stream, write_stream):
                send, receive = anyio.create_memory_object_stream[SessionMessage | Exception](0)
                async with anyio.create_task_group() as tg:
                    tg.start_soon(self._pump, read_stream, send)
                    try:
                        async with ClientSession(
                            receive,
                            write_stream,
                            read_timeout_seconds=self.initialize_timeout,
                            message_handler=self._on_message,
                            client_info=_CLIENT_INFO,
                        ) as session:
                            outcome = await self._serve(session)
                    finally:
                        tg.cancel_scope.cancel()
            return outcome
        except BeamclawMCPError as exc:
            return exc
        except Exception as exc:  # a broken connection becomes a typed error
            leaf = _leaf(exc)
            if isinstance(leaf, BeamclawMCPError):
                return leaf
            reason = self._closed_reason or _describe(leaf)
            if self._state is not ServerState.UP:
                return MCPHandshakeError(self.name, reason)
            return MCPConnectionLostError(self.name, reason)

    async def _pump(self, read_stream: Any, send: MemoryObjectSendStream[Any]) -> None:
        try:
            async with send:
                async for item in read_stream:
                    if isinstance(item, Exception):
                        self._bad_message = f"invalid JSON-RPC from server: {_describe(item)}"
                    await send.send(item)
        except (anyio.ClosedResourceError, anyio.BrokenResourceError, anyio.EndOfStream):
            pass
        finally:
            if self._closed_reason is None:
                if self._session is None:
                    target = self.settings.url or self.settings.command
                    self._closed_reason = (
                        f"the connection to {target} closed before the handshake completed"
                    )
                else:
                    self._closed_reason = "the server closed the connection"
            self._wake.set()

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, mt.ToolListChangedNotification):
            self._refresh_requested = True
            self._wake.set()

    async def _serve(self, session: ClientSession) -> BeamclawMCPError:
        try:
            init = await session.initialize()
        except MCPError as exc:
            return MCPHandshakeError(self.name, self._handshake_reason("initialize", exc))
        except (RuntimeError, ValidationError) as exc:
            return MCPHandshakeError(self.name, f"initialize: {_describe(exc)}")
        try:
            listed = await self._list_tools(session)
        except MCPError as exc:
            return MCPHandshakeError(self.name, self._handshake_reason("tools/list", exc))
        self._server_info = init.server_info
        self._protocol_version = init.protocol_version
        self._session = session
        self._publish(listed)
        self._set_state(ServerState.UP)
        self._up_event.set()
        emit(
            EventType.MCP_SERVER_UP,
            server=self.name,
            tools=len(listed),
            transport=self.settings.resolved_transport,
            restarts=self._restarts,
        )
        while True:
            with anyio.move_on_after(self.ping_interval) as idle:
                await self._wake.wait()
            self._wake.clear()
            if self._closed_reason is not None:
                self._session = None
                return MCPConnectionLostError(self.name, self._closed_reason)
            if self._refresh_requested:
                self._refresh_requested = False
                try:
                    self._publish(await self._list_tools(session))
                except MCPError as exc:
                    return MCPConnectionLostError(self.name, f"tools/list refresh: {exc}")
            elif idle.cancelled_caught:
                try:
                    await session.send_ping()
                except MCPError as exc:
                    self._session = None
                    return MCPConnectionLostError(self.name, f"ping failed: {exc.message}")

    def _handshake_reason(self, step: str, exc: MCPError) -> str:
        if exc.code == mt.REQUEST_TIMEOUT:
            reason = f"{step} timed out after {self.initialize_timeout:g}s"
        elif exc.code == mt.CONNECTION_CLOSED:
            reason = f"{step}: {self._closed_reason or 'connection closed'}"
        else:
            reason = f"{step}: {exc.message} (code {exc.code})"
        if self._bad_message:
            reason = f"{reason}; {self._bad_message}"
        return reason

    async def _list_tools(self, session: ClientSession) -> list[RemoteTool]:
        listed: list[RemoteTool] = []
        cursor: str | None = None
        for _page in range(MAX_TOOL_PAGES):
            params = mt.PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            for tool in page.tools:
                annotations = tool.annotations
                listed.append(
                    RemoteTool(
                        server=self.name,
                        name=tool.name,
                        description=tool.description or tool.title or tool.name,
                        input_schema=dict(tool.input_schema),
                        title=tool.title,
                        read_only=annotations.read_only_hint if annotations else None,
                    )
                )
            cursor = page.next_cursor
            if not cursor:
                break
        return listed

    def _publish(self, listed: list[RemoteTool]) -> None:
        before = set(self._tools)
        self._tools = {t.name: t for t in listed}
        after = set(self._tools)
        self._on_tools(self.name, listed)
        if before != after and self._runs:
            emit(
                EventType.MCP_TOOLS_CHANGED,
                server=self.name,
                count=len(after),
                added=sorted(after - before),
                removed=sorted(before - after),
            )

    async def wait_up(self, wait_seconds: float) -> bool:
        """Wait until the server has been up at least once (True) or ``wait_seconds`` pass."""
        try:
            await asyncio.wait_for(self._up_event.wait(), wait_seconds)
        except TimeoutError:
            return False
        return True

    # ------------------------------------------------------------------ calls

    async def call_tool(
        self, tool: str, arguments: dict[str, Any], *, timeout_seconds: float | None = None
    ) -> ToolOutput:
        """Call ``tool`` and convert its result. Never waits for a server that is down.

        Raises:
            MCPServerUnavailableError: the server is not up.
            MCPUnknownToolError: the server does not offer ``tool``.
            MCPCallTimeoutError: no answer within the timeout (the call was cancelled).
            MCPConnectionLostError: the connection dropped during the call.
            MCPProtocolError: a JSON-RPC error or an invalid result.
        """
        session = self._session
        if session is None or self._state is not ServerState.UP:
            raise MCPServerUnavailableError(self.name, self._state.value, self._last_error)
        if tool not in self._tools:
            raise MCPUnknownToolError(self.name, tool)
        limit = timeout_seconds if timeout_seconds is not None else self.call_timeout
        try:
            result = await session.call_tool(tool, arguments, read_timeout_seconds=limit)
        except MCPError as exc:
            if exc.code == mt.REQUEST_TIMEOUT:
                raise MCPCallTimeoutError(self.name, tool, limit) from exc
            if exc.code == mt.CONNECTION_CLOSED:
                reason = self._closed_reason or "connection closed"
                raise MCPConnectionLostError(self.name, reason, tool=tool) from exc
            raise MCPProtocolError(self.name, scrub(exc.message), code=exc.code, tool=tool) from exc
        except (anyio.ClosedResourceError, anyio.BrokenResourceError) as exc:
            reason = self._closed_reason or "connection closed"
            raise MCPConnectionLostError(self.name, reason, tool=tool) from exc
        except (RuntimeError, ValidationError) as exc:
            raise MCPProtocolError(self.name, scrub(_describe(exc)), tool=tool) from exc
        return to_tool_output(
            result, max_chars=self.max_result_chars, max_image_bytes=self.max_image_bytes
        )


def _leaf(exc: BaseException) -> BaseException:
    """The first real error inside (nested) exception groups."""
    while isinstance(exc, BaseExceptionGroup):
        inner: tuple[BaseException, ...] = exc.exceptions  # pyright: ignore[reportUnknownMemberType]
        preferred = [e for e in inner if not isinstance(e, asyncio.CancelledError)]
        exc = (preferred or list(inner))[0]
    return exc


def _describe(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return scrub(text if len(text) < 500 else text[:500] + "…")


def _tail(errlog: IO[bytes]) -> str:
    try:
        errlog.flush()
        errlog.seek(0, 2)
        size = errlog.tell()
        errlog.seek(max(0, size - _STDERR_TAIL * 4))
        text = errlog.read().decode("utf-8", errors="replace")
    except (OSError, ValueError):
        return ""
    text = " ".join(text.split())
    return scrub(text[-_STDERR_TAIL:])
