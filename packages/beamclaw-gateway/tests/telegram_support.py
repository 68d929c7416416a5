"""Shared by the Telegram tests: a real gateway with the Telegram channel on, talking to
:class:`~beamclaw_gateway.fake_telegram.FakeBotApi` over real HTTP."""

from __future__ import annotations

from collections.abc import AsyncGenerator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import httpx

from beamclaw_core.providers import Provider
from beamclaw_gateway import BeamclawConfig
from beamclaw_gateway.fake_telegram import FakeBotApi, SentMessage
from beamclaw_gateway.settings import TelegramSettings
from beamclaw_gateway.telegram import TelegramChannel
from beamclaw_gateway.testing import LiveGateway, live_gateway, quiet_config
from beamclaw_obs import Secret

TOKEN = "123456:TEST"


def telegram_config(tg: FakeBotApi, **telegram: Any) -> BeamclawConfig:
    config = quiet_config()
    settings: dict[str, Any] = {
        "enabled": True,
        "token": Secret.model_validate(tg.token),
        "api_base_url": tg.base_url,
        "dm_policy": "open",
        "poll_timeout_seconds": 1,
        "edit_interval_seconds": 0.2,
    }
    settings.update(telegram)
    config.gateway.channels.telegram = TelegramSettings.model_validate(settings)
    return config


@dataclass
class Bench:
    tg: FakeBotApi
    gw: LiveGateway

    @property
    def channel(self) -> TelegramChannel:
        channel = self.gw.app.state.services.telegram
        assert channel is not None
        return channel

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(base_url=self.gw.base_url, timeout=10)

    def bot_messages(self, chat_id: int) -> list[SentMessage]:
        return [m for m in self.tg.messages(chat_id) if not m.deleted]

    def find(self, chat_id: int, text: str) -> SentMessage | None:
        """The bot's message in ``chat_id`` now showing ``text`` (exactly, else part of it)."""
        shown = self.bot_messages(chat_id)
        exact = [m for m in shown if m.plain_text == text]
        return (exact or [m for m in shown if text in m.plain_text] or [None])[0]

    async def shows(self, chat_id: int, text: str, timeout: float = 10.0) -> SentMessage:
        """Wait until a message of the bot in ``chat_id`` shows ``text``."""
        await self.tg.wait_for(lambda _tg: self.find(chat_id, text) is not None, timeout)
        found = self.find(chat_id, text)
        assert found is not None
        return found


@asynccontextmanager
async def telegram_gateway(
    provider: Provider | Callable[[str], Provider] | None,
    tg: FakeBotApi,
    configure: Callable[[BeamclawConfig], None] | None = None,
    *,
    wait_ready: bool = True,
    **telegram: Any,
) -> AsyncGenerator[Bench]:
    config = telegram_config(tg, **telegram)
    if configure is not None:
        configure(config)
    async with live_gateway(provider, config) as gw:
        bench = Bench(tg, gw)
        if wait_ready:
            await tg.wait_for(lambda _tg: bench.channel.ready.is_set(), 10)
        yield bench
