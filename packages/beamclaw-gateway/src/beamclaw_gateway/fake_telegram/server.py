"""A fake Telegram Bot API over real HTTP on 127.0.0.1 (aiohttp.web on a free port).

Point a bot at it with ``TelegramAPIServer.from_base(tg.base_url)`` (aiogram): methods at
``{base}/bot{token}/{method}``, files at ``{base}/file/bot{token}/{file_path}``::

    async with FakeBotApi(token="123456:TEST") as tg:
        tg.push_message(chat_id=42, from_id=42, text="hi")
        ...                                   # the bot under test polls and answers
        await tg.wait_call("sendMessage")
        assert tg.messages(42)[-1].text == "hello"

Every call is recorded in :attr:`FakeBotApi.calls` before it is answered. Order of checks
per call: token (401), an injected fault (:meth:`~FakeBotApi.fail_next`), the method (404
if unknown), then the method's own validation. ``getUpdates`` long-polls for its
``timeout``, wakes as soon as an update is pushed, answers 409 while a webhook is set and
terminates an older pending ``getUpdates`` with 409 when a newer one arrives (as Telegram
does when two bot instances poll). Stopping answers pending requests with 503.
"""

from __future__ import annotations

import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType
from typing import Any

import aiohttp
from aiohttp import web

from beamclaw_gateway.fake_telegram.api import (
    SUCCESS_DESCRIPTIONS,
    canonical_name,
    handler_for,
    start_get_updates,
)
from beamclaw_gateway.fake_telegram.errors import BotApiError
from beamclaw_gateway.fake_telegram.params import Params, decode_params, resolve_uploads
from beamclaw_gateway.fake_telegram.records import (
    Call,
)
from beamclaw_gateway.fake_telegram.report import dump
from beamclaw_gateway.fake_telegram.state import BotState
from beamclaw_gateway.fake_telegram.user_actions import UserActions
from beamclaw_gateway.fake_telegram.wire import default_description, failure, ok, read_params

HOST = "127.0.0.1"
SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"  # noqa: S105 - a header name
TERMINATED = (
    "Conflict: terminated by other getUpdates request; "
    "make sure that only one bot instance is running"
)


@dataclass(frozen=True)
class _Fault:
    status: int
    description: str
    retry_after: int | None
    raw_body: str | None


class FakeBotApi(UserActions):
    """A fake Telegram Bot API server for one bot token; an async context manager."""

    def __init__(
        self,
        token: str = "123456:TEST",  # noqa: S107 - a fake bot's token
        *,
        bot_username: str = "fake_test_bot",
        bot_first_name: str = "Fake Bot",
        host: str = HOST,
        port: int = 0,
    ) -> None:
        prefix = token.split(":", 1)[0]
        self.token = token
        super().__init__(
            BotState(
                bot_id=int(prefix) if prefix.isdigit() else 1,
                bot_username=bot_username,
                bot_first_name=bot_first_name,
            )
        )
        self.calls: list[Call] = []
        """Every API call, in arrival order (see :class:`Call`)."""
        self.downloads: list[str] = []
        """``file_path`` of every file download served."""
        self._host = host
        self._port = port
        self._faults: dict[str, deque[_Fault]] = {}
        self._hang = False
        self._reject = False
        self._poll_seq = 0
        self._polling = 0
        self._stopping = False
        self._runner: web.AppRunner | None = None
        self._client: aiohttp.ClientSession | None = None

    # -- lifecycle ---------------------------------------------------------------------

    @property
    def port(self) -> int:
        return self._port

    @property
    def base_url(self) -> str:
        """What ``TelegramAPIServer.from_base`` takes: ``http://127.0.0.1:PORT``."""
        return f"http://{self._host}:{self._port}"

    async def start(self) -> FakeBotApi:
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        self._runner = web.AppRunner(app, shutdown_timeout=0.5, access_log=None)
        await self._runner.setup()
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((self._host, self._port))
        sock.listen(128)
        sock.setblocking(False)
        self._port = sock.getsockname()[1]
        await web.SockSite(self._runner, sock).start()
        return self

    async def stop(self) -> None:
        self._stopping = True
        self._notify()
        if self._client is not None:
            await self._client.close()
            self._client = None
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeBotApi:
        return await self.start()

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    @property
    def polling(self) -> int:
        """How many ``getUpdates`` requests are unanswered right now (including ones whose
        client gave up: the fake answers them when their wait ends)."""
        return self._polling

    # -- faults ------------------------------------------------------------------------

    def fail_next(
        self,
        method: str,
        status: int = 429,
        *,
        retry_after: int | None = None,
        description: str | None = None,
        times: int = 1,
        raw_body: str | None = None,
    ) -> None:
        """The next ``times`` calls of ``method`` fail with ``status``.

        A 429 carries ``parameters.retry_after`` (default 1 s). ``description`` defaults
        to Telegram's for the status. ``raw_body`` answers that text instead of JSON (an
        HTML error page from a proxy).
        """
        if status == 429 and retry_after is None:
            retry_after = 1
        fault = _Fault(
            status, description or default_description(status, retry_after), retry_after, raw_body
        )
        queue = self._faults.setdefault(canonical_name(method), deque())
        queue.extend([fault] * times)

    def hang_get_updates(self) -> None:
        """``getUpdates`` calls (new and pending) are held unanswered until released."""
        self._hang = True

    def release_get_updates(self) -> None:
        """Held ``getUpdates`` calls resume (a superseded one then answers 409)."""
        self._hang = False
        self._notify()

    def reject_token(self, reject: bool = True) -> None:
        """Every call answers 401 Unauthorized, as for a revoked token."""
        self._reject = reject

    # -- waiting -----------------------------------------------------------------------

    async def wait_for(
        self,
        predicate: Callable[[FakeBotApi], bool],
        timeout: float = 5.0,  # noqa: ASYNC109 - a test helper: the deadline is its point
    ) -> None:
        """Return once ``predicate(self)`` holds; raises TimeoutError with a state dump."""
        deadline = time.monotonic() + timeout
        while not predicate(self):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise TimeoutError(f"condition not met within {timeout}s\n{self.dump()}")
            await self._changed_within(min(remaining, 0.05))

    async def wait_call(
        self,
        method: str,
        count: int = 1,
        timeout: float = 5.0,  # noqa: ASYNC109 - a test helper: the deadline is its point
    ) -> Call:
        """The ``count``-th call of ``method`` (1-based), once it has arrived."""
        name = canonical_name(method)
        await self.wait_for(lambda tg: len(tg.calls_of(name)) >= count, timeout)
        return self.calls_of(name)[count - 1]

    def calls_of(self, method: str) -> list[Call]:
        name = canonical_name(method)
        return [call for call in self.calls if call.method == name]

    def dump(self) -> str:
        """A readable summary of calls, queued updates and chats (for failing tests)."""
        return dump(self.base_url, self.calls, self.state, self._polling)

    # -- webhooks ----------------------------------------------------------------------

    async def deliver_webhook(self, update: dict[str, Any], secret: str | None = None) -> int:
        """POST ``update`` to the registered webhook as Telegram does; the HTTP status.

        The ``X-Telegram-Bot-Api-Secret-Token`` header carries ``secret`` or else the
        registered secret. A 2xx answer confirms the update if it is queued.
        """
        hook = self.state.webhook
        if hook is None:
            raise BotApiError.bad_request("no webhook is set")
        token = secret if secret is not None else hook.secret_token
        headers = {SECRET_HEADER: token} if token is not None else {}
        if self._client is None:
            self._client = aiohttp.ClientSession()
        async with self._client.post(
            hook.url, json=update, headers=headers, timeout=aiohttp.ClientTimeout(total=10)
        ) as response:
            await response.read()
            status = response.status
        if 200 <= status < 300:
            delivered = update.get("update_id")
            self.state.updates = [u for u in self.state.updates if u["update_id"] != delivered]
            self._notify()
        return status

    async def deliver_pending(self) -> list[int]:
        """Deliver every queued update to the webhook, oldest first; their statuses."""
        return [await self.deliver_webhook(update) for update in list(self.state.updates)]

    # -- serving -----------------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        call = Call(canonical_name(request.match_info["method"]), {}, {}, time.monotonic())
        self.calls.append(call)
        self._notify()
        try:
            response = await self._answer(request, call)
        except BotApiError as e:
            response = failure(e)
            call.description = e.description
        call.status = response.status
        self._notify()
        return response

    async def _answer(self, request: web.Request, call: Call) -> web.StreamResponse:
        raw, parts = await read_params(request)
        call.params = raw
        if self._reject or request.match_info["token"] != self.token:
            raise BotApiError(401, "Unauthorized")
        call.params = decode_params(raw)
        uploads = resolve_uploads(call.params, parts)
        call.files = {name: upload.data for name, upload in uploads.items()}
        faults = self._faults.get(call.method)
        if faults:
            fault = faults.popleft()
            if fault.raw_body is not None:
                call.description = fault.raw_body
                return web.Response(
                    status=fault.status, text=fault.raw_body, content_type="text/html"
                )
            raise BotApiError(fault.status, fault.description, retry_after=fault.retry_after)
        if call.method == "getUpdates":
            return ok(await self._get_updates(Params(call.params)))
        handler = handler_for(call.method)
        if handler is None:
            raise BotApiError(404, "Not Found")
        result = handler(self.state, Params(call.params), uploads)
        return ok(result, SUCCESS_DESCRIPTIONS.get(call.method))

    async def _get_updates(self, p: Params) -> list[dict[str, Any]]:
        self._poll_seq += 1
        seq = self._poll_seq
        self._polling += 1
        self._notify()  # an older pending poll is now terminated
        try:
            await self._while_hung()
            limit, timeout = start_get_updates(self.state, p)
            deadline = time.monotonic() + timeout
            while True:
                if self._stopping:
                    raise BotApiError(503, "Service Unavailable")
                if seq != self._poll_seq:
                    raise BotApiError(409, TERMINATED)
                if self.state.webhook is not None:
                    raise BotApiError(409, "Conflict: terminated by setWebhook request")
                if self._hang:
                    await self._while_hung()
                    continue
                updates = self.state.deliverable(limit)
                remaining = deadline - time.monotonic()
                if updates or remaining <= 0:
                    return updates
                await self._changed_within(remaining)
        finally:
            self._polling -= 1

    async def _while_hung(self) -> None:
        while self._hang and not self._stopping:
            await self._changed_within(60.0)

    async def _download(self, request: web.Request) -> web.StreamResponse:
        if self._reject or request.match_info["token"] != self.token:
            return web.json_response(BotApiError(401, "Unauthorized").body(), status=401)
        stored = self.state.file_by_path(request.match_info["path"])
        if stored is None:
            return web.json_response(BotApiError(404, "Not Found").body(), status=404)
        self.downloads.append(stored.file_path)
        return web.Response(
            body=stored.data, content_type=stored.mime_type or "application/octet-stream"
        )
