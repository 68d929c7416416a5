"""``POST /v1/chat/completions`` on the hot path (hot_path.py) answers as FastAPI's route
does: the same API built without it is the reference, request by request."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from fastapi import FastAPI

from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway import GatewayRuntime
from beamclaw_gateway.api import ROUTERS
from beamclaw_gateway.api_assembly import assemble_api
from beamclaw_gateway.hot_path import HOT_PATH, ChatCompletionsHotPath
from beamclaw_gateway.routes_openai import chat_completions
from beamclaw_gateway.services import GatewayServices
from beamclaw_obs import EventType, Secret
from beamclaw_obs.testing import EventRecorder, recording_events

from .conftest import gateway_config

TOKEN = "hot-path-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
JSON = {"content-type": "application/json"}
VALID = b'{"model": "beamclaw/default", "messages": [{"role": "user", "content": "hi"}]}'


@pytest.fixture
async def runtime(
    beamclaw_home: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[GatewayRuntime]:
    monkeypatch.setenv("BC_TEST_HOT_TOKEN", TOKEN)
    config = gateway_config()
    config.gateway.http.token = Secret(env="BC_TEST_HOT_TOKEN")
    provider = ScriptedProvider([Reply("the answer")], repeat_last=True)
    rt = GatewayRuntime(config, provider_factory=lambda _agent: provider)
    await rt.start()
    yield rt
    await rt.stop()


@pytest.fixture
def events() -> Iterator[EventRecorder]:
    with recording_events("hot-path-test") as recorder:
        yield recorder


def apis(runtime: GatewayRuntime) -> tuple[FastAPI, FastAPI]:
    services = GatewayServices(runtime)
    return (
        assemble_api(runtime, services, ROUTERS),
        assemble_api(runtime, services, ROUTERS, hot_path=False),
    )


def hot_path_of(app: FastAPI) -> ChatCompletionsHotPath:
    """The hot path in ``app``'s middleware stack (built by its first request)."""
    layer: Any = app.middleware_stack
    while layer is not None and not isinstance(layer, ChatCompletionsHotPath):
        layer = getattr(layer, "app", None)
    assert isinstance(layer, ChatCompletionsHotPath)
    return layer


async def answer(
    app: FastAPI, body: bytes, headers: dict[str, str], session: str
) -> tuple[int, Any, dict[str, str]]:
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://test"
    ) as client:
        r = await client.post(HOT_PATH, content=body, headers={**headers, "X-Session-Id": session})
    if r.headers.get("content-type", "").startswith("text/event-stream"):
        frames = [line for line in r.text.splitlines() if line.startswith("data: ")]
        return r.status_code, (frames[-1], len(frames) > 2), dict(r.headers)
    data: Any = r.json()
    if r.status_code == 200:  # ids and times differ from turn to turn
        data = (data["object"], data["model"], data["choices"][0]["message"]["content"])
    return r.status_code, data, dict(r.headers)


CASES: list[tuple[str, bytes, dict[str, str], bool]] = [
    # name, body, headers, taken by the hot path
    ("valid", VALID, {**AUTH, **JSON}, True),
    ("no content type", VALID, AUTH, False),
    ("json with charset", VALID, {**AUTH, "content-type": "application/json; charset=utf-8"}, True),
    (
        "stream",
        b'{"model": "beamclaw/default", "stream": true,'
        b' "messages": [{"role": "user", "content": "hi"}]}',
        {**AUTH, **JSON},
        True,
    ),
    (
        "unknown model",
        b'{"model": "nobody", "messages": [{"role": "user", "content": "hi"}]}',
        {**AUTH, **JSON},
        True,
    ),
    (
        "no user message",
        b'{"model": "beamclaw/default", "messages": [{"role": "system", "content": "x"}]}',
        {**AUTH, **JSON},
        True,
    ),
    ("not json", b"{", {**AUTH, **JSON}, False),
    ("empty body", b"", {**AUTH, **JSON}, False),
    ("not the schema", b'{"messages": 1}', {**AUTH, **JSON}, False),
    ("no model", b'{"messages": []}', {**AUTH, **JSON}, False),
    ("another content type", VALID, {**AUTH, "content-type": "text/plain"}, False),
    ("a +json content type", VALID, {**AUTH, "content-type": "application/x+json"}, False),
    ("no token", VALID, JSON, False),
    ("a wrong token", VALID, {"Authorization": "Bearer wrong", **JSON}, False),
]


@pytest.mark.parametrize(("name", "body", "headers", "hot"), CASES, ids=[c[0] for c in CASES])
async def test_the_hot_path_answers_as_fastapis_route(
    runtime: GatewayRuntime, name: str, body: bytes, headers: dict[str, str], hot: bool
) -> None:
    with_hot_path, without = apis(runtime)
    status, data, sent = await answer(with_hot_path, body, headers, f"hot-{name}")
    expected_status, expected, expected_headers = await answer(
        without, body, headers, f"cold-{name}"
    )
    assert (status, data) == (expected_status, expected)
    for header in ("content-type", "www-authenticate", "retry-after"):
        assert sent.get(header) == expected_headers.get(header)
    assert ("x-session-id" in sent) == ("x-session-id" in expected_headers)
    assert hot_path_of(with_hot_path).served == (1 if hot else 0)


async def test_an_idempotent_replay_takes_the_hot_path_too(runtime: GatewayRuntime) -> None:
    with_hot_path, _without = apis(runtime)
    headers = {**AUTH, **JSON, "Idempotency-Key": "hot-once"}
    first = await answer(with_hot_path, VALID, headers, "hot-idempotent")
    again = await answer(with_hot_path, VALID, headers, "hot-idempotent")
    assert first[:2] == again[:2] and first[0] == 200
    assert again[2].get("idempotent-replayed") == "true"
    assert hot_path_of(with_hot_path).served == 2


async def test_a_hot_turn_is_one_request_event_on_its_route(
    runtime: GatewayRuntime, events: EventRecorder
) -> None:
    with_hot_path, _without = apis(runtime)
    assert (await answer(with_hot_path, VALID, {**AUTH, **JSON}, "hot-event"))[0] == 200
    assert (await answer(with_hot_path, VALID, JSON, "hot-event"))[0] == 401
    found = [
        (e.data["route"], e.data["status"])
        for e in events.of(EventType.HTTP_REQUEST)
        if e.data["method"] == "POST"
    ]
    assert found == [(HOT_PATH, 200), (HOT_PATH, 401)]
    assert [e.data["reason"] for e in events.of(EventType.AUTH_FAILED)] == ["missing"]


def test_the_hot_path_calls_the_routes_own_handler() -> None:
    """The route FastAPI documents for ``POST /v1/chat/completions`` is the handler the
    hot path calls, so the two cannot drift apart."""
    from fastapi.routing import APIRoute

    routes = [
        r
        for router in ROUTERS
        for r in router.routes
        if isinstance(r, APIRoute) and r.path == HOT_PATH and "POST" in (r.methods or ())
    ]
    assert [r.endpoint for r in routes] == [chat_completions]
