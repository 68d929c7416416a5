"""Fixtures: the fake integrations server and an :class:`Integrations` under a temp home."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from beamclaw_obs import Event, forget_secrets, get_emitter
from beamclaw_tools import SessionRef
from beamclaw_tools.integrations import Integrations
from beamclaw_tools.integrations.testing import FakeIntegrationsServer


class Sleeps:
    """Records the waits the API client asks for (Retry-After honoured, not slept)."""

    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)


class EventLog:
    """An obs backend keeping every event (to prove tokens never reach one)."""

    name = "integrations-event-log"

    def __init__(self) -> None:
        self.events: list[Event] = []

    def handle(self, event: Event) -> None:
        self.events.append(event)

    def close(self) -> None:
        return


@pytest.fixture
def event_log() -> Iterator[EventLog]:
    log = EventLog()
    get_emitter().add_backend(log)
    yield log
    get_emitter().remove_backend(log.name)


@pytest.fixture(autouse=True)
def _no_leaked_secrets() -> Iterator[None]:
    yield
    forget_secrets()


@pytest.fixture
async def fake() -> AsyncIterator[FakeIntegrationsServer]:
    async with FakeIntegrationsServer() as server:
        yield server


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "home"


@pytest.fixture
def hub(fake: FakeIntegrationsServer, home: Path, sleeps: Sleeps) -> Integrations:
    return Integrations(fake.settings(), home=home, sleep=sleeps)


@pytest.fixture
def session(tmp_path: Path) -> SessionRef:
    return SessionRef(session_id="s-1", agent_id="default", workspace=tmp_path)


async def consent(link: str) -> tuple[str, str]:
    """Follow an authorisation link as the person's browser would; ``(state, code)``
    from the redirect to the callback (not followed: no gateway here)."""
    async with httpx.AsyncClient(trust_env=False) as client:
        response = await client.get(link)
    assert response.status_code == 302, response.text
    query = parse_qs(urlsplit(response.headers["location"]).query)
    return query["state"][0], query["code"][0]


async def connect_google(hub: Integrations) -> None:
    link = hub.connect_instructions("google").split("\n")[-1]
    state, code = await consent(link)
    await hub.complete_google(state, code)


NOTION_TOKEN = "ntn_fake_notion_token_0123456789abcdef"
SLACK_TOKEN = "xoxp-fake-slack-token-0123456789"
