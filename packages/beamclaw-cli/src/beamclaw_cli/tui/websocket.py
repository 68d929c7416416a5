"""The daemon backend: a running gateway's ``/ws`` WebSocket (protocol in docs/api.md).

Client frames: ``message`` (with a client ``id``), ``approval``, ``cancel``, ``ping``.
Server frames: ``session`` (the session id once known), every ``TurnEvent`` dict, and
``error``/``pong``/``authenticated``. The token, when ``[gateway.http] token`` is set,
travels in the ``Authorization`` header of the upgrade request. A closed connection
becomes one ``disconnected`` event; the TUI says so and keeps its transcript.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import uuid
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any

from beamclaw_cli.daemon import Endpoint
from beamclaw_cli.errors import BeamclawCliError
from beamclaw_cli.tui.backend import Decision, EventQueue

if TYPE_CHECKING:
    from websockets.asyncio.client import ClientConnection


class DaemonConnectionError(BeamclawCliError):
    """The daemon's ``/ws`` could not be reached or refused the connection."""


def ws_url(endpoint: Endpoint) -> str:
    return "ws" + endpoint.base_url.removeprefix("http") + "/ws"


class WebSocketBackend:
    """Talks to a running daemon over ``/ws``."""

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        agent: str,
        user_id: str,
        token: str | None = None,
        channel: str = "tui",
        open_timeout: float = 5.0,
    ) -> None:
        self._endpoint = endpoint
        self._agent = agent
        self._user_id = user_id
        self._token = token
        self._channel = channel
        self._open_timeout = open_timeout
        self._queue = EventQueue()
        self._ws: ClientConnection | None = None
        self._reader: asyncio.Task[None] | None = None
        self._session_id: str | None = None

    @property
    def description(self) -> str:
        return f"daemon {self._endpoint.base_url.removeprefix('http://')}"

    @property
    def session_id(self) -> str | None:
        return self._session_id

    async def start(self) -> None:
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake, InvalidStatus

        headers = {"Authorization": f"Bearer {self._token}"} if self._token else None
        url = ws_url(self._endpoint)
        try:
            self._ws = await connect(
                url, additional_headers=headers, open_timeout=self._open_timeout, max_size=None
            )
        except InvalidStatus as e:
            status = e.response.status_code
            hint = " (check [gateway.http] token)" if status in (401, 403) else ""
            raise DaemonConnectionError(
                f"the daemon refused the WebSocket at {url}: HTTP {status}{hint}"
            ) from e
        except (OSError, InvalidHandshake, TimeoutError) as e:
            raise DaemonConnectionError(f"cannot open the WebSocket at {url}: {e}") from e
        self._reader = asyncio.create_task(self._read())

    async def _read(self) -> None:
        from websockets.exceptions import ConnectionClosed

        ws = self._ws
        assert ws is not None
        try:
            async for raw in ws:
                try:
                    frame: Any = json.loads(raw)
                except ValueError:
                    continue
                if not isinstance(frame, dict):
                    continue
                event: dict[str, Any] = frame  # pyright: ignore[reportUnknownVariableType]
                if event.get("type") == "session" and isinstance(event.get("session_id"), str):
                    self._session_id = event["session_id"]
                self._queue.put(event)
            code = ws.close_code
            self._queue.put(
                {"type": "disconnected", "message": f"the daemon closed the connection ({code})"}
            )
        except ConnectionClosed as e:
            self._queue.put({"type": "disconnected", "message": f"connection lost: {e}"})

    async def _send(self, frame: dict[str, Any]) -> None:
        from websockets.exceptions import ConnectionClosed

        if self._ws is None:
            raise DaemonConnectionError("not connected to the daemon")
        try:
            await self._ws.send(json.dumps(frame))
        except ConnectionClosed as e:
            self._queue.put({"type": "error", "message": f"not sent: connection closed ({e})"})

    async def send(self, text: str) -> None:
        frame: dict[str, Any] = {
            "type": "message",
            "id": uuid.uuid4().hex,
            "text": text,
            "agent": self._agent,
            "user": self._user_id,
            "channel": self._channel,
        }
        if self._session_id is not None:
            frame["session_id"] = self._session_id
        await self._send(frame)

    async def answer_approval(self, request_id: str, decision: Decision) -> None:
        await self._send(
            {
                "type": "approval",
                "session_id": self._session_id,
                "request_id": request_id,
                "decision": decision,
            }
        )

    def events(self) -> AsyncIterator[dict[str, Any]]:
        return aiter(self._queue)

    async def close(self) -> None:
        from websockets.exceptions import WebSocketException

        if self._ws is not None:
            with contextlib.suppress(WebSocketException, OSError, TimeoutError):
                await asyncio.wait_for(self._ws.close(), 2.0)
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader
        self._queue.close()
