"""Token auth (constant-time compare, header or first WS frame) and rate limiting."""

from __future__ import annotations

import asyncio
import json

import httpx
import openai
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway import BeamclawConfig
from beamclaw_gateway.ratelimit import RateLimiter, client_kind
from beamclaw_gateway.settings import RateLimitSettings
from beamclaw_obs import Secret

from .conftest import LiveGateway, gateway_config, live_gateway

TOKEN = "s3cret-gateway-token"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def token_config(**http: object):
    config = gateway_config()
    config.gateway.http.token = Secret(env="BC_TEST_GW_TOKEN")
    for key, value in http.items():
        setattr(config.gateway.http, key, value)
    return config


@pytest.fixture(autouse=True)
def _token_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BC_TEST_GW_TOKEN", TOKEN)


async def test_protected_routes_need_the_token_health_stays_open() -> None:
    provider = ScriptedProvider([Reply("hi")])
    async with live_gateway(provider, token_config(metrics_public=False)) as gw:
        async with httpx.AsyncClient(base_url=gw.base_url) as c:
            denied = {
                path: (await c.get(path)).status_code
                for path in ("/v1/models", "/api/sessions", "/api/status", "/metrics")
            }
            wrong = await c.get("/v1/models", headers={"Authorization": "Bearer nope"})
            a2a = await c.post("/a2a", json={"jsonrpc": "2.0", "id": 1, "method": "tasks/list"})
            health = await c.get("/health")
            card = await c.get("/.well-known/agent.json")
            allowed = await c.get("/api/status", headers=AUTH)
            metrics = await c.get("/metrics", headers=AUTH)
        async with openai.AsyncOpenAI(
            base_url=f"{gw.base_url}/v1", api_key="bad", max_retries=0
        ) as bad:
            with pytest.raises(openai.AuthenticationError):
                await bad.models.list()
        async with openai.AsyncOpenAI(
            base_url=f"{gw.base_url}/v1", api_key=TOKEN, max_retries=0
        ) as good:
            done = await good.chat.completions.create(
                model="beamclaw/default", messages=[{"role": "user", "content": "x"}]
            )
    assert denied == {"/v1/models": 401, "/api/sessions": 401, "/api/status": 401, "/metrics": 401}
    assert wrong.status_code == 401
    assert wrong.headers["www-authenticate"] == "Bearer"
    assert wrong.json()["error"]["type"] == "authentication_error"
    assert a2a.status_code == 401
    assert health.status_code == 200
    assert card.json()["security"] == [{"bearer": []}]
    assert allowed.status_code == 200
    assert metrics.status_code == 200
    assert done.choices[0].message.content == "hi"


async def test_openapi_declares_the_bearer_scheme_on_every_guarded_operation() -> None:
    async with (
        live_gateway(ScriptedProvider([]), token_config()) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        schema = (await c.get("/openapi.json")).json()
        # a lowercase scheme is still a bearer token; another scheme is not
        loose = await c.get("/api/status", headers={"Authorization": f"bearer {TOKEN}"})
        basic = await c.get("/api/status", headers={"Authorization": f"Basic {TOKEN}"})
    assert schema["components"]["securitySchemes"]["HTTPBearer"] == {
        "type": "http",
        "scheme": "bearer",
        "description": "The gateway token.",
    }
    guarded = {
        (path, method): op.get("security")
        for path, ops in schema["paths"].items()
        for method, op in ops.items()
        if path.startswith(("/v1/", "/api/", "/a2a"))
    }
    assert ("/v1/chat/completions", "post") in guarded and ("/a2a", "post") in guarded
    assert all(sec == [{"HTTPBearer": []}] for sec in guarded.values()), guarded
    assert "security" not in schema["paths"]["/health"]["get"]
    assert loose.status_code == 200
    assert basic.status_code == 401


async def test_unset_token_variable_fails_closed(monkeypatch: pytest.MonkeyPatch) -> None:
    async with live_gateway(ScriptedProvider([]), token_config()) as gw:
        monkeypatch.delenv("BC_TEST_GW_TOKEN")
        async with httpx.AsyncClient(base_url=gw.base_url) as c:
            r = await c.get("/v1/models", headers=AUTH)
    assert r.status_code == 401


async def test_websocket_auth_by_header_or_first_frame() -> None:
    async with live_gateway(ScriptedProvider([]), token_config()) as gw:
        async with websockets.connect(gw.ws_url, additional_headers=AUTH) as ws:
            assert json.loads(await ws.recv()) == {"type": "authenticated"}
        with pytest.raises(InvalidStatus) as info:
            async with websockets.connect(
                gw.ws_url, additional_headers={"Authorization": "Bearer wrong"}
            ):
                pass
        assert info.value.response.status_code == 401
        async with websockets.connect(gw.ws_url) as ws:
            await ws.send(json.dumps({"type": "auth", "token": TOKEN}))
            assert json.loads(await ws.recv()) == {"type": "authenticated"}
        async with websockets.connect(gw.ws_url) as ws:
            await ws.send(json.dumps({"type": "message", "text": "sneaky"}))
            error = json.loads(await ws.recv())
            await asyncio.wait_for(ws.wait_closed(), 5)
        assert error["code"] == "unauthorized"
        assert ws.close_code == 4401


async def test_rate_limit_429_with_headers_on_http_and_ws_handshake() -> None:
    config = gateway_config()
    config.gateway.rate_limit.per_loopback = "3/minute"
    async with live_gateway(ScriptedProvider([]), config) as gw:
        async with httpx.AsyncClient(base_url=gw.base_url) as c:
            ok = [await c.get("/v1/models") for _ in range(3)]
            limited = await c.get("/v1/models")
            health = await c.get("/health")
            webhook = await c.post("/webhook/github", json={})
        with pytest.raises(InvalidStatus) as info:
            async with websockets.connect(gw.ws_url):
                pass
    assert [r.status_code for r in ok] == [200, 200, 200]
    assert ok[0].headers["x-ratelimit-limit"] == "3"
    assert [r.headers["x-ratelimit-remaining"] for r in ok] == ["2", "1", "0"]
    assert limited.status_code == 429
    assert int(limited.headers["retry-after"]) >= 1
    assert limited.headers["x-ratelimit-remaining"] == "0"
    assert int(limited.headers["x-ratelimit-reset"]) >= 1
    assert limited.json()["error"]["code"] == "rate_limit_exceeded"
    assert health.status_code == 200
    assert webhook.status_code == 429
    assert info.value.response.status_code == 429


def _default_limits(config: BeamclawConfig) -> BeamclawConfig:
    config.gateway.rate_limit = RateLimitSettings()
    return config


def _from(gw: LiveGateway, ip: str) -> httpx.AsyncClient:
    """A client whose requests reach the running app from ``ip`` (the ASGI scope's client)."""
    transport = httpx.ASGITransport(app=gw.app, client=(ip, 40000))
    return httpx.AsyncClient(transport=transport, base_url="http://gateway")


async def test_a_loopback_batch_script_is_not_throttled_by_the_default_limits() -> None:
    async with (
        live_gateway(ScriptedProvider([]), _default_limits(gateway_config())) as gw,
        httpx.AsyncClient(base_url=gw.base_url) as c,
    ):
        statuses = [(await c.get("/v1/models")).status_code for _ in range(300)]
    assert statuses == [200] * 300


async def test_default_limits_protect_from_outside_and_from_wrong_tokens() -> None:
    protective = RateLimitSettings().per_ip
    assert protective == "120/minute"
    async with live_gateway(ScriptedProvider([]), _default_limits(token_config())) as gw:
        async with _from(gw, "203.0.113.7") as outsider:
            anonymous = [(await outsider.get("/.well-known/agent.json")) for _ in range(121)]
        async with _from(gw, "203.0.113.8") as member:
            authed = [
                (await member.get("/v1/models", headers=AUTH)).status_code for _ in range(300)
            ]
        async with _from(gw, "127.0.0.1") as local_guesser:
            wrong = {"Authorization": "Bearer not-the-token"}
            guesses = [(await local_guesser.get("/v1/models", headers=wrong)) for _ in range(121)]
    assert {r.status_code for r in anonymous[:120]} == {200}
    assert anonymous[120].status_code == 429
    assert int(anonymous[120].headers["retry-after"]) >= 1
    assert anonymous[0].headers["x-ratelimit-limit"] == "120"
    assert authed == [200] * 300
    assert {r.status_code for r in guesses[:120]} == {401}
    assert guesses[120].status_code == 429


async def test_each_kind_of_client_has_its_own_limit() -> None:
    limiter = RateLimiter(
        RateLimitSettings(per_ip="1/minute", per_loopback="2/minute", per_token="3/minute")
    )
    try:
        anonymous = [(await limiter.check("anonymous", "1.2.3.4")).allowed for _ in range(2)]
        loopback = [(await limiter.check("loopback", "127.0.0.1")).allowed for _ in range(3)]
        token = [(await limiter.check("authenticated", "tok")).allowed for _ in range(4)]
        other = await limiter.check("authenticated", "other-token")
    finally:
        await limiter.close()
    assert anonymous == [True, False]
    assert loopback == [True, True, False]
    assert token == [True, True, True, False]
    assert other.allowed


@pytest.mark.parametrize(
    ("ip", "verified", "rejected", "kind"),
    [
        ("127.0.0.1", False, False, "loopback"),
        ("127.8.9.10", False, False, "loopback"),
        ("::1", False, False, "loopback"),
        ("::ffff:127.0.0.1", False, False, "loopback"),
        ("127.0.0.1", False, True, "anonymous"),
        ("203.0.113.7", False, False, "anonymous"),
        ("203.0.113.7", True, False, "authenticated"),
        ("127.0.0.1", True, False, "authenticated"),
        ("unknown", False, False, "anonymous"),
    ],
)
def test_client_kind(ip: str, verified: bool, rejected: bool, kind: str) -> None:
    assert client_kind(ip, token_verified=verified, token_rejected=rejected) == kind


@pytest.mark.redis
async def test_redis_storage_is_shared_between_limiters(redis_url: str) -> None:
    settings = RateLimitSettings(per_ip="2/minute", storage_uri=redis_url)
    node_a, node_b = RateLimiter(settings), RateLimiter(settings)
    try:
        await node_a.reset()
        first = await node_a.check("anonymous", "10.0.0.1")
        second = await node_b.check("anonymous", "10.0.0.1")
        third = await node_a.check("anonymous", "10.0.0.1")
        assert node_a.health().as_dict()["storage"] == "redis"
    finally:
        await node_a.reset()
        await node_a.close()
        await node_b.close()
    assert (first.allowed, second.allowed, third.allowed) == (True, True, False)
    assert third.headers()["Retry-After"]


async def test_unreachable_storage_fails_open_and_reports_degraded() -> None:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    limiter = RateLimiter(RateLimitSettings(storage_uri=f"redis://127.0.0.1:{port}/0"))
    try:
        decision = await limiter.check("anonymous", "1.1.1.1")
    finally:
        await limiter.close()
    assert decision.allowed
    assert limiter.health().state.value == "degraded"
