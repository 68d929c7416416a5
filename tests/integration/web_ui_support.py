"""Seams for the web page's browser tests: Debian's Chromium under Playwright, a gateway
on the fake LLM server with a token, and a TCP proxy whose connections a test can cut.

Playwright cannot download browsers here: it drives the system's ``chromium`` through
``executable_path``. A missing Chromium fails the test (``make test`` installs it through
scripts/test-services.sh); it never skips.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
from collections.abc import AsyncGenerator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
from playwright.async_api import Browser, Page, async_playwright

from beamclaw_core.providers import ProviderSettings
from beamclaw_core.testing import FakeLLMServer, FakeOpenAIServer
from beamclaw_gateway.config import BeamclawConfig
from beamclaw_gateway.testing import LiveGateway, live_gateway, quiet_config
from beamclaw_obs import Secret
from beamclaw_tools import Autonomy

TOKEN = "web-ui-test-token-5f2c"
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "web-ui"


def chromium_path() -> str:
    """The system Chromium (``$BEAMCLAW_CHROMIUM`` overrides); fails when missing."""
    for candidate in (os.environ.get("BEAMCLAW_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and (found := shutil.which(candidate)):
            return found
    pytest.fail(
        "headless Chromium is required for the web page tests (apt-get install chromium); "
        "`make test` installs it through scripts/test-services.sh"
    )


@asynccontextmanager
async def chromium() -> AsyncGenerator[Browser]:
    async with async_playwright() as playwright:
        browser = await playwright.chromium.launch(
            executable_path=chromium_path(), args=["--no-sandbox", "--disable-gpu"]
        )
        try:
            yield browser
        finally:
            await browser.close()


def ui_config(upstream: str, *, autonomy: Autonomy = Autonomy.SUPERVISED) -> BeamclawConfig:
    """A quiet gateway with a token, its default provider at ``upstream``."""
    config = quiet_config()
    config.core.default_provider = "fake"
    config.core.autonomy_level = autonomy
    config.core.providers = {
        "fake": ProviderSettings(
            kind="openai", base_url=upstream, model="fake", api_key=Secret.model_validate("sk-x")
        )
    }
    config.gateway.http.token = Secret.model_validate(TOKEN)
    return config


@asynccontextmanager
async def gateway_on(
    script: Sequence[Any], *, scheduler: bool = False
) -> AsyncGenerator[tuple[FakeLLMServer, LiveGateway]]:
    async with FakeOpenAIServer(list(script)) as server:
        config = ui_config(server.base_url)
        config.scheduler.enabled = scheduler
        async with live_gateway(None, config) as gw:
            yield server, gw


async def screenshot(page: Page, name: str) -> Path:
    """Save the page as ``test-artifacts/web-ui/<name>.png`` (gitignored)."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    await page.screenshot(path=str(path), full_page=True)
    return path


class TcpProxy:
    """Loopback TCP proxy to ``port``: :meth:`cut` drops every open connection and refuses
    new ones (the gateway looks down) until :meth:`restore`."""

    def __init__(self, port: int) -> None:
        self.target = port
        self.port = 0
        self.down = False
        self.attempts = 0
        """Connections the page opened (refused ones included): a retry storm shows here."""
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self._tasks: set[asyncio.Task[None]] = set()

    async def __aenter__(self) -> TcpProxy:
        self._server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])
        return self

    async def __aexit__(self, *_: object) -> None:
        self.cut()
        assert self._server is not None
        self._server.close()
        for task in list(self._tasks):
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def cut(self) -> None:
        self.down = True
        for writer in list(self._writers):
            writer.transport.abort()
        self._writers.clear()

    def restore(self) -> None:
        self.down = False

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.attempts += 1
        if self.down:
            writer.transport.abort()
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.target)
        except OSError:
            writer.transport.abort()
            return
        self._writers |= {writer, up_writer}
        for source, sink in ((reader, up_writer), (up_reader, writer)):
            task = asyncio.create_task(self._pipe(source, sink))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    async def _pipe(self, source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        except (ConnectionError, OSError):
            pass
        finally:
            self._writers.discard(sink)
            with contextlib.suppress(Exception):
                sink.transport.abort()
