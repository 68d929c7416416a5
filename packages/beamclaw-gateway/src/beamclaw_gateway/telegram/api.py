"""The Bot API client: aiogram's :class:`~aiogram.Bot` on an aiohttp session pointed at
``api_base_url`` (every call and every file download), with the retry policy.

Invariants: a 429 waits ``retry_after`` and a 5xx or network failure waits an exponential
backoff before the same call is made again, up to ``attempts`` times; a 401 is
:class:`TelegramTokenRejectedError` at once (no retry can fix it); a 400 is
:class:`TelegramBadRequestError`; aiogram's error types never leave this module. Once
closed, every call fails (aiogram would silently open a new session that nobody closes).
"""

from __future__ import annotations

import asyncio
import io
from collections.abc import Awaitable, Callable
from typing import TypeVar

from aiogram import Bot
from aiogram.client.session.aiohttp import AiohttpSession
from aiogram.client.telegram import TelegramAPIServer
from aiogram.exceptions import (
    TelegramAPIError,
    TelegramBadRequest,
    TelegramNetworkError,
    TelegramRetryAfter,
    TelegramServerError,
    TelegramUnauthorizedError,
)
from aiogram.methods.base import TelegramMethod
from aiogram.utils.token import TokenValidationError
from loguru import logger

from beamclaw_gateway.telegram.errors import (
    TelegramBadRequestError,
    TelegramSendError,
    TelegramTokenRejectedError,
)
from beamclaw_obs import Backoff

T = TypeVar("T")

ATTEMPTS = 6
"""Tries of one call through 429s and 5xx before it fails."""


class BotApi:
    """One bot's Bot API client (see the module invariants)."""

    def __init__(
        self,
        token: str,
        api_base_url: str,
        *,
        attempts: int = ATTEMPTS,
        backoff: Backoff | None = None,
        sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
    ) -> None:
        self._token = token
        self._base = api_base_url.rstrip("/")
        self.attempts = attempts
        self.backoff = backoff or Backoff(initial=0.5, maximum=30.0)
        self._sleep = sleep
        self.retries = 0
        """Calls made again after a 429, a 5xx or a network failure."""
        self.bot = self._new_bot()
        self._closed = False

    def _new_bot(self) -> Bot:
        session = AiohttpSession(api=TelegramAPIServer.from_base(self._base))
        try:
            return Bot(self._token, session=session)
        except TokenValidationError as exc:
            raise TelegramTokenRejectedError("the token is not of the form <id>:<secret>") from exc

    async def reset(self) -> None:
        """Drop every connection (a stalled long poll) and start a fresh session."""
        old = self.bot
        self.bot = self._new_bot()
        await old.session.close()

    async def close(self) -> None:
        """Close the session; a call after this fails at once (it would open a new one)."""
        self._closed = True
        await self.bot.session.close()

    async def __call__(
        self, method: TelegramMethod[T], *, request_timeout: int | None = None, retry: bool = True
    ) -> T:
        """Make ``method``'s call under the retry policy."""
        name = type(method).__name__
        attempt = 0
        while True:
            attempt += 1
            if self._closed:
                raise TelegramSendError(name, "the Telegram channel stopped")
            try:
                return await self.bot(method, request_timeout=request_timeout)
            except TelegramUnauthorizedError as exc:
                raise TelegramTokenRejectedError(exc.message) from exc
            except TelegramBadRequest as exc:
                raise TelegramBadRequestError(name, exc.message) from exc
            except TelegramRetryAfter as exc:
                delay, why = float(exc.retry_after), f"429 retry after {exc.retry_after} s"
            except (TelegramServerError, TelegramNetworkError) as exc:
                delay, why = self.backoff.delay(attempt), f"{type(exc).__name__}: {exc.message}"
            except TelegramAPIError as exc:
                raise TelegramSendError(name, exc.message) from exc
            if not retry or attempt >= self.attempts:
                raise TelegramSendError(name, f"{why} (after {attempt} attempts)")
            self.retries += 1
            logger.info("telegram {}: {}; again in {:.1f} s", name, why, delay)
            await self._sleep(delay)

    async def download(self, file_path: str, seconds: int = 60) -> bytes:
        """A file's bytes from ``{api_base_url}/file/bot<token>/<file_path>``."""
        sink = io.BytesIO()
        if self._closed:
            raise TelegramSendError("download", "the Telegram channel stopped")
        try:
            await self.bot.download_file(file_path, sink, timeout=seconds)
        except TelegramAPIError as exc:
            raise TelegramSendError("download", exc.message) from exc
        except Exception as exc:  # aiohttp's own (ClientResponseError…): translated here
            raise TelegramSendError("download", f"{type(exc).__name__}: {exc}") from exc
        return sink.getvalue()
