"""The tool bridge: scripts in containers call the gateway's tools over a Unix socket.

One server per sandbox, its socket in a private directory mounted read-only at
``/run/beamclaw`` in every container, the discovery directory at ``/tools``. Each run
gets a fresh token (in its exec's environment only) naming the session it runs for; a
request without a live token is refused. Connections are served concurrently, requests
on one connection in order.

``/tools`` lists the tools the bridge rules permit (one directory serves every
container); ``search_tools``, ``get_tool_schema`` and ``call_tool`` also apply the
calling agent's own tool policy.

Every ``call_tool`` passes, in order: the bridge rules (``[sandbox] bridge_rules``:
``exec``, ``bash`` and ``terminal`` denied by default), the agent's tool policy, and the
session's autonomy and standing approvals (:func:`approval_refusal`); then it runs through
the tool registry (validation, timeout, scrubbing, events) like a call of the model.
With PII tokenisation on, its arguments are de-tokenised before the tool runs and its
result is tokenised before the script sees it (:mod:`beamclaw_sandbox.pii`).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import secrets
import shutil
import tempfile
from collections.abc import Awaitable, Callable, Collection, Sequence
from pathlib import Path
from typing import Any

from loguru import logger

from beamclaw_obs import cancel_and_wait
from beamclaw_sandbox.bridge_policy import BridgePolicy, approval_refusal
from beamclaw_sandbox.bridge_protocol import (
    DENIED,
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    UNAUTHORIZED,
    FrameDecoder,
    FrameTooLargeError,
    Request,
    RpcError,
    encode_frame,
    error_message,
    parse_request,
    result_message,
)
from beamclaw_sandbox.discovery import write_discovery
from beamclaw_sandbox.pii import PiiVault
from beamclaw_tools import SessionRef, ToolCall, ToolDef, ToolPolicy, ToolRegistry

SOCKET_NAME = "bridge.sock"
CONTAINER_SOCKET_DIR = "/run/beamclaw"
CONTAINER_TOOLS_DIR = "/tools"
Grants = Callable[[SessionRef], Awaitable[Collection[str]]]
"""The approval port: tools ``session``'s person granted its agent for good (``/always``)."""


async def no_grants(_session: SessionRef) -> Collection[str]:
    return ()


class ToolBridge:
    """The bridge server of one sandbox."""

    def __init__(
        self,
        registry: ToolRegistry,
        *,
        rules: Sequence[str],
        policy_for: Callable[[str], ToolPolicy] | None = None,
        grants: Grants = no_grants,
    ) -> None:
        self._registry = registry
        self._rules = BridgePolicy.parse(rules)
        self._policy_for = policy_for
        self._grants = grants
        self._runs: dict[str, SessionRef] = {}
        self._server: asyncio.Server | None = None
        self._root: Path | None = None
        self._calls = itertools.count(1)
        self._connections: set[asyncio.Task[None]] = set()
        self.pii: PiiVault | None = None
        """Set by the sandbox: arguments are de-tokenised, results tokenised."""

    # ---------------------------------------------------------------- life cycle

    @property
    def socket_dir(self) -> Path:
        assert self._root is not None, "the bridge is not started"
        return self._root / "socket"

    @property
    def tools_dir(self) -> Path:
        assert self._root is not None, "the bridge is not started"
        return self._root / "tools"

    def binds(self) -> dict[str, str]:
        """Host directory → container path, both mounted read-only."""
        return {
            str(self.socket_dir): CONTAINER_SOCKET_DIR,
            str(self.tools_dir): CONTAINER_TOOLS_DIR,
        }

    async def start(self) -> None:
        # a short path: a Unix socket's path must fit in 108 bytes
        self._root = Path(tempfile.mkdtemp(prefix="bcsbx-"))
        self._root.chmod(0o755)
        self.socket_dir.mkdir(mode=0o755)
        self.socket_dir.chmod(0o755)
        self.tools_dir.mkdir(mode=0o755)
        self.tools_dir.chmod(0o755)
        path = self.socket_dir / SOCKET_NAME
        self._server = await asyncio.start_unix_server(self._serve, path=str(path))
        path.chmod(0o666)  # the container's user connects; a run token is still required
        self.refresh()

    async def stop(self) -> None:
        if self._server is not None:
            self._server.close()
            await cancel_and_wait(list(self._connections))
            await self._server.wait_closed()
            self._server = None
        if self._root is not None:
            shutil.rmtree(self._root, ignore_errors=True)
            self._root = None

    def refresh(self) -> list[str]:
        """Rewrite ``/tools`` from the registry (tools the bridge rules permit)."""
        visible = [d for d in self._registry.definitions() if self._rules.permits(d.name)]
        return write_discovery(self.tools_dir, visible)

    # ---------------------------------------------------------------- runs

    def open_run(self, session: SessionRef) -> str:
        """A token for one run of ``session`` (valid until :meth:`close_run`)."""
        token = secrets.token_urlsafe(24)
        self._runs[token] = session
        return token

    def close_run(self, token: str) -> None:
        self._runs.pop(token, None)

    # ---------------------------------------------------------------- serving

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        if task is not None:
            self._connections.add(task)
        decoder = FrameDecoder()
        try:
            while data := await reader.read(65536):
                try:
                    bodies = decoder.feed(data)
                except FrameTooLargeError as e:
                    writer.write(encode_frame(error_message(RpcError(INVALID_PARAMS, str(e)))))
                    await writer.drain()
                    return
                for body in bodies:
                    writer.write(encode_frame(await self._answer(body)))
                    await writer.drain()
        except (ConnectionError, asyncio.IncompleteReadError):
            return
        finally:
            if task is not None:
                self._connections.discard(task)
            writer.close()
            with contextlib.suppress(ConnectionError, OSError):
                await writer.wait_closed()

    async def _answer(self, body: bytes) -> dict[str, Any]:
        try:
            request = parse_request(body)
            session = self._runs.get(str(request.params.get("token", "")))
            if session is None:
                raise RpcError(UNAUTHORIZED, "no valid run token", request.id)
            return result_message(request.id, await self._dispatch(request, session))
        except RpcError as e:
            return error_message(e)

    def _policy(self, session: SessionRef) -> ToolPolicy | None:
        return self._policy_for(session.agent_id) if self._policy_for is not None else None

    def _visible(self, session: SessionRef) -> list[ToolDef]:
        return [
            d
            for d in self._registry.definitions(self._policy(session))
            if self._rules.permits(d.name)
        ]

    async def _dispatch(self, request: Request, session: SessionRef) -> Any:
        params = request.params
        if request.method == "search_tools":
            query = str(params.get("query", "")).lower()
            return [
                {"name": d.name, "description": d.description}
                for d in self._visible(session)
                if query in d.name.lower() or query in d.description.lower()
            ]
        if request.method == "get_tool_schema":
            found = self._find(request, session)
            return {
                "name": found.name,
                "description": found.description,
                "parameters": found.parameters,
            }
        if request.method == "call_tool":
            return await self._call(request, session)
        raise RpcError(METHOD_NOT_FOUND, f"no method {request.method!r}", request.id)

    def _find(self, request: Request, session: SessionRef) -> ToolDef:
        name = request.params.get("name")
        if not isinstance(name, str) or not name:
            raise RpcError(INVALID_PARAMS, "name must be a tool name", request.id)
        for definition in self._visible(session):
            if definition.name == name:
                return definition
        raise RpcError(DENIED, f"tool {name!r} is unknown or not permitted here", request.id)

    async def _call(self, request: Request, session: SessionRef) -> dict[str, Any]:
        definition = self._find(request, session)
        arguments = request.params.get("arguments", {})
        if not isinstance(arguments, dict):
            raise RpcError(INVALID_PARAMS, "arguments must be an object", request.id)
        granted = await self._grants(session)
        refusal = approval_refusal(session, definition, granted)
        if refusal is not None:
            raise RpcError(DENIED, refusal, request.id)
        tokenizer = self.pii.for_session(session.session_id) if self.pii is not None else None
        args = dict[str, Any](arguments)
        if tokenizer is not None:
            args = dict[str, Any](tokenizer.detokenize_value(args))
        call = ToolCall(
            id=f"bridge-{os.getpid()}-{next(self._calls)}",
            name=definition.name,
            args=args,
            source="sandbox-bridge",
        )
        logger.debug("bridge call {} for session {}", definition.name, session.session_id)
        result = await self._registry.execute(call, session, policy=self._policy(session))
        content = result.content
        if tokenizer is not None:
            content = tokenizer.tokenize(content, known=False)
        return {"content": content, "is_error": result.is_error}
