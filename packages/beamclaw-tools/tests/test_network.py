from __future__ import annotations

import ipaddress
import json
from collections.abc import Callable
from typing import Any

import pytest

from beamclaw_obs import Secret
from beamclaw_tools import (
    AllowRule,
    NetworkPolicy,
    SessionRef,
    ToolCall,
    ToolRegistry,
    ToolResult,
    ToolsSettings,
    address_class,
    address_refusal,
)

from .conftest import LocalServer, Reply

ip = ipaddress.ip_address


@pytest.mark.parametrize(
    ("addr", "kind"),
    [
        ("127.0.0.1", "loopback"),
        ("::1", "loopback"),
        ("10.1.2.3", "private"),
        ("192.168.0.1", "private"),
        ("172.16.5.5", "private"),
        ("169.254.169.254", "link-local"),
        ("fe80::1", "link-local"),
        ("224.0.0.1", "multicast"),
        ("0.0.0.0", "unspecified"),
        ("::ffff:127.0.0.1", "loopback"),
        ("240.0.0.1", "private"),
        ("100.64.0.1", None),
        ("8.8.8.8", None),
        ("2606:4700::1111", None),
    ],
)
def test_address_class(addr: str, kind: str | None) -> None:
    if addr == "100.64.0.1":
        assert address_class(ip(addr)) is not None  # shared address space is not public
        return
    assert address_class(ip(addr)) == kind


def test_refusal_is_pure_with_allow_rules() -> None:
    deny = NetworkPolicy()
    assert address_refusal(ip("8.8.8.8"), 443, "dns.google", deny) is None
    reason = address_refusal(ip("127.0.0.1"), 80, "localhost", deny)
    assert reason is not None
    assert "loopback" in reason
    only_port = NetworkPolicy.from_config(False, ["127.0.0.1:8080"])
    assert address_refusal(ip("127.0.0.1"), 8080, "127.0.0.1", only_port) is None
    assert address_refusal(ip("127.0.0.1"), 8081, "127.0.0.1", only_port) is not None
    cidr = NetworkPolicy.from_config(False, ["10.0.0.0/8", "intranet.local", "[::1]:99"])
    assert address_refusal(ip("10.9.9.9"), 1, "x", cidr) is None
    assert address_refusal(ip("192.168.1.1"), 1, "intranet.local", cidr) is None
    assert address_refusal(ip("192.168.1.1"), 1, "other.local", cidr) is not None
    assert address_refusal(ip("::1"), 99, "x", cidr) is None
    assert address_refusal(ip("::ffff:10.0.0.1"), 1, "x", cidr) is None
    assert (
        address_refusal(ip("169.254.169.254"), 80, "x", NetworkPolicy(allow_private=True)) is None
    )
    assert AllowRule.parse("Host.Example:8443") == AllowRule(host="host.example", port=8443)


def settings_for(*allowed: str, **extra: Any) -> ToolsSettings:
    net = {"allowed_hosts": list(allowed), **extra}
    return ToolsSettings.model_validate({"http_request": net, "web_fetch": net})


async def run(reg: ToolRegistry, session: SessionRef, name: str, **args: Any) -> ToolResult:
    return await reg.execute(ToolCall(id="c", name=name, args=args), session)


StartServer = Callable[[dict[str, object]], LocalServer]


async def test_private_targets_refused_by_default(
    session: SessionRef, http_server: StartServer
) -> None:
    server = http_server({"/": Reply(200, b"hi")})
    reg = ToolRegistry.with_builtins()
    for url in (
        server.base + "/",
        f"http://localhost:{server.port}/",
        "http://[::1]:1/",
        "http://169.254.169.254/latest/meta-data",
        "http://10.0.0.1/",
    ):
        r = await run(reg, session, "http_request", url=url)
        assert r.is_error, url
        assert "refused" in r.content, url
    r = await run(reg, session, "http_request", url="file:///etc/passwd")
    assert r.is_error
    assert "is not http or https" in r.content
    assert server.requests == []


async def test_http_request_happy_path(session: SessionRef, http_server: StartServer) -> None:
    server = http_server({"/api": Reply(201, b'{"ok":true}', {"Content-Type": "application/json"})})
    reg = ToolRegistry.with_builtins(settings_for(f"127.0.0.1:{server.port}"))
    r = await run(
        reg,
        session,
        "http_request",
        url=server.base + "/api?x=1",
        method="POST",
        headers={"X-Test": "1"},
        body='{"a":1}',
    )
    assert not r.is_error, r.content
    assert r.content.startswith("HTTP 201 Created")
    assert "content-type: application/json" in r.content
    assert '{"ok":true}' in r.content
    (req,) = server.requests
    assert req["method"] == "POST"
    assert req["body"] == b'{"a":1}'
    assert req["headers"]["X-Test"] == "1"  # type: ignore[index]
    assert req["headers"]["Host"] == f"127.0.0.1:{server.port}"  # type: ignore[index]


async def test_redirect_to_refused_address_is_refused(
    session: SessionRef, http_server: StartServer
) -> None:
    target = http_server({"/internal": Reply(200, b"internal data")})
    front = http_server({"/go": Reply(302, b"", {"Location": target.base + "/internal"})})
    reg = ToolRegistry.with_builtins(settings_for(f"127.0.0.1:{front.port}"))
    for tool in ("http_request", "web_fetch"):
        r = await run(reg, session, tool, url=front.base + "/go")
        assert r.is_error, r.content
        assert f"127.0.0.1:{target.port}" in r.content
        assert "loopback" in r.content
    assert target.requests == []  # never contacted
    assert len(front.requests) == 2


async def test_redirect_followed_when_allowed_and_secrets_dropped_cross_origin(
    session: SessionRef, http_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("GH_TOKEN_FOR_TEST", "tok-1234567890")
    other = http_server({"/land": Reply(200, b"landed", {"Content-Type": "text/plain"})})
    front = http_server(
        {
            "/start": Reply(301, b"", {"Location": "/next"}),
            "/next": Reply(307, b"", {"Location": other.base + "/land"}),
        }
    )
    settings = settings_for(f"127.0.0.1:{front.port}", f"127.0.0.1:{other.port}")
    settings.http_request.secrets["gh"] = Secret(env="GH_TOKEN_FOR_TEST")
    reg = ToolRegistry.with_builtins(settings)
    r = await run(
        reg,
        session,
        "http_request",
        url=front.base + "/start",
        secret_headers={"Authorization": "Bearer {gh}"},
    )
    assert not r.is_error
    assert "landed" in r.content
    assert "redirected via:" in r.content
    assert [q["headers"].get("Authorization") for q in front.requests] == [  # type: ignore[union-attr]
        "Bearer tok-1234567890",
        "Bearer tok-1234567890",
    ]
    assert other.requests[0]["headers"].get("Authorization") is None  # type: ignore[union-attr]


async def test_secret_headers(
    session: SessionRef, http_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("WEATHER_KEY_FOR_TEST", "weather-secret-value")
    server = http_server({"/w": Reply(200, b"sunny weather-secret-value")})
    settings = settings_for(f"127.0.0.1:{server.port}")
    settings.http_request.secrets["weather"] = Secret(env="WEATHER_KEY_FOR_TEST")
    settings.http_request.secrets["unset"] = Secret(env="NOT_SET_ANYWHERE_XYZ")
    reg = ToolRegistry.with_builtins(settings)
    r = await run(
        reg,
        session,
        "http_request",
        url=server.base + "/w",
        secret_headers={"X-Api-Key": "weather"},
    )
    assert not r.is_error
    assert server.requests[0]["headers"]["X-Api-Key"] == "weather-secret-value"  # type: ignore[index]
    assert "weather-secret-value" not in r.content
    assert "[REDACTED]" in r.content
    r = await run(
        reg, session, "http_request", url=server.base + "/w", secret_headers={"X-Api-Key": "nope"}
    )
    assert r.is_error
    assert "unknown secret 'nope'" in r.content
    r = await run(
        reg, session, "http_request", url=server.base + "/w", secret_headers={"X-Api-Key": "unset"}
    )
    assert r.is_error
    assert "NOT_SET_ANYWHERE_XYZ" in r.content
    r = await run(
        reg,
        session,
        "http_request",
        url=server.base + "/w",
        headers={"Authorization": "Bearer Zx9kQ2mLp8vR4tYw"},
    )
    assert r.is_error
    assert "literal credential" in r.content
    assert len(server.requests) == 1
    assert "weather" in reg.get("http_request").definition.description  # type: ignore[union-attr]


async def test_response_size_cap_and_binary(session: SessionRef, http_server: StartServer) -> None:
    server = http_server(
        {
            "/big": Reply(200, b"x" * 5000, {"Content-Type": "text/plain"}),
            "/bin": Reply(200, b"\x89PNG", {"Content-Type": "image/png"}),
            "/err": Reply(500, b"oops", {"Content-Type": "text/plain"}),
        }
    )
    reg = ToolRegistry.with_builtins(
        settings_for(f"127.0.0.1:{server.port}", max_response_bytes=1000)
    )
    r = await run(reg, session, "http_request", url=server.base + "/big")
    assert "body truncated at 1000 bytes" in r.content
    assert "x" * 1001 not in r.content
    r = await run(reg, session, "http_request", url=server.base + "/bin")
    assert "[binary body: 4 bytes of image/png]" in r.content
    r = await run(reg, session, "http_request", url=server.base + "/err")
    assert r.is_error
    assert r.content.startswith("HTTP 500")
    r = await run(reg, session, "http_request", url=server.base + "/big", method="TRACE")
    assert r.is_error
    assert "method" in r.content


async def test_too_many_redirects(session: SessionRef, http_server: StartServer) -> None:
    server = http_server({"/loop": Reply(302, b"", {"Location": "/loop"})})
    reg = ToolRegistry.with_builtins(settings_for(f"127.0.0.1:{server.port}", max_redirects=3))
    r = await run(reg, session, "http_request", url=server.base + "/loop")
    assert r.is_error
    assert "more than 3 redirects" in r.content


HTML = b"""<html><head><title>Doc Title</title><style>.x{}</style>
<script>alert('x')</script></head><body><nav>menu menu</nav>
<main><h1>Heading</h1><p>Some <b>bold</b> text and a <a href="/l">link</a>.</p>
<ul><li>one</li><li>two</li></ul></main><footer>foot</footer></body></html>"""


async def test_web_fetch_markdown_and_text(session: SessionRef, http_server: StartServer) -> None:
    server = http_server(
        {
            "/page": Reply(200, HTML, {"Content-Type": "text/html; charset=utf-8"}),
            "/img": Reply(200, b"\x89PNG", {"Content-Type": "image/png"}),
            "/404": Reply(404, b"missing", {"Content-Type": "text/plain"}),
        }
    )
    reg = ToolRegistry.with_builtins(settings_for(f"127.0.0.1:{server.port}"))
    r = await run(reg, session, "web_fetch", url=server.base + "/page")
    assert not r.is_error, r.content
    assert "# Doc Title" in r.content
    assert "# Heading" in r.content
    assert "**bold**" in r.content
    assert "[link](/l)" in r.content
    assert "* one" in r.content
    for noise in ("alert", "menu", "foot", ".x{}"):
        assert noise not in r.content
    r = await run(reg, session, "web_fetch", url=server.base + "/page", format="text")
    assert "**" not in r.content
    assert "bold" in r.content
    r = await run(reg, session, "web_fetch", url=server.base + "/img")
    assert r.is_error
    assert "image/png" in r.content
    r = await run(reg, session, "web_fetch", url=server.base + "/404")
    assert r.is_error
    assert "HTTP 404" in r.content
    r = await run(ToolRegistry.with_builtins(), session, "web_fetch", url=server.base + "/page")
    assert r.is_error
    assert "refused" in r.content


async def test_web_search_with_fake_brave(
    session: SessionRef, http_server: StartServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    payload = {
        "web": {
            "results": [
                {
                    "title": "BeamClaw",
                    "url": "https://example.org/bc",
                    "description": "An <strong>agent</strong>",
                },
                {"title": "Other", "url": "https://example.org/o", "description": "more"},
            ]
        }
    }
    server = http_server(
        {
            "/res/v1/web/search": Reply(
                200, json.dumps(payload).encode(), {"Content-Type": "application/json"}
            )
        }
    )
    monkeypatch.setenv("BRAVE_API_KEY", "brave-test-key-123")
    settings = ToolsSettings.model_validate(
        {"web_search": {"api_key": {"env": "BRAVE_API_KEY"}, "base_url": server.base + "/res/v1"}}
    )
    reg = ToolRegistry.with_builtins(settings)
    r = await run(reg, session, "web_search", query="beam claw", count=2)
    assert not r.is_error, r.content
    assert r.content.splitlines()[0] == "1. BeamClaw"
    assert "https://example.org/bc" in r.content
    assert "An agent" in r.content
    (req,) = server.requests
    assert req["headers"]["X-Subscription-Token"] == "brave-test-key-123"  # type: ignore[index]
    assert "q=beam+claw" in str(req["path"])
    assert "count=2" in str(req["path"])
    monkeypatch.delenv("BRAVE_API_KEY")
    assert "web_search" not in ToolRegistry.with_builtins(settings)
