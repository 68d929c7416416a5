"""Both HTTP transports (aiohttp, httpx) fail alike: BeamClaw's own provider errors.

The :class:`~beamclaw_core.providers.Upstream` seam raises
:class:`~beamclaw_core.providers.UpstreamError` (a ``ProviderError``), never an httpx or
aiohttp type, and a provider on either transport reports every failure with the same
:class:`ErrorKind`, status, ``retry_after`` and message. All over real HTTP against the
shipped fake servers.
"""

from __future__ import annotations

from typing import Any

import pytest

from beamclaw_core.messages import Message
from beamclaw_core.providers import (
    ErrorKind,
    ProviderError,
    ProviderSettings,
    UpstreamError,
    build_upstream,
    collect,
)
from beamclaw_core.testing import (
    FakeOpenAIServer,
    FakeReply,
    HttpFault,
    InvalidJSON,
    ServerHang,
    Truncate,
)

from .conftest import Wire

USER = [Message.user("hi")]
TRANSPORTS = ["aiohttp", "httpx"]


def _settings(base_url: str, transport: str, **more: Any) -> ProviderSettings:
    data: dict[str, Any] = {"kind": "openai", "base_url": base_url, "model": "gpt-4o"}
    data.update(http_transport=transport, **more)
    return ProviderSettings.model_validate(data)


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_upstream_seam_raises_our_error_for_a_refused_connection(transport: str) -> None:
    server = FakeOpenAIServer([])
    await server.start()
    url = server.base_url + "/chat/completions"
    await server.stop()
    upstream = build_upstream(_settings(server.base_url, transport))
    try:
        with pytest.raises(UpstreamError) as info:
            await upstream.post(url, b"{}", {"content-type": "application/json"})
    finally:
        await upstream.aclose()
    assert info.value.kind is ErrorKind.NETWORK
    assert info.value.message.startswith("cannot connect")


@pytest.mark.parametrize("transport", TRANSPORTS)
async def test_the_upstream_seam_raises_our_error_for_a_body_cut_short(transport: str) -> None:
    async with FakeOpenAIServer([Truncate(after_events=2)]) as server:
        upstream = build_upstream(_settings(server.base_url, transport))
        body = b'{"model": "gpt-4o", "stream": true, "messages": []}'
        try:
            resp = await upstream.post(
                server.base_url + "/chat/completions", body, {"content-type": "application/json"}
            )
            with pytest.raises(UpstreamError) as info:
                async for _ in resp.aiter_bytes():
                    pass
            await resp.aclose()
        finally:
            await upstream.aclose()
    assert info.value.kind is ErrorKind.NETWORK
    assert "truncated" in info.value.message


async def _call(provider: Any, streamed: bool) -> None:
    if streamed:
        await collect(provider.stream(USER))
    else:
        await provider.complete(USER)


async def _failure(wire: Wire, transport: str, streamed: bool, step: Any, **more: Any) -> Any:
    async with wire.server_cls([step]) as server:
        provider = wire.provider(server, http_transport=transport, **more)
        try:
            with pytest.raises(ProviderError) as info:
                await _call(provider, streamed)
        finally:
            await provider.close()
    e = info.value
    # our wording up to the first ": "; a library's own detail may follow it
    return (e.kind, e.status, e.retry_after, e.message.split(": ")[0])


FAILURES = [
    pytest.param(HttpFault.rate_limit(7), {}, ErrorKind.RATE_LIMIT, id="429-retry-after"),
    pytest.param(HttpFault.server_error(502), {}, ErrorKind.NETWORK, id="5xx"),
    pytest.param(HttpFault.auth_error(401), {}, ErrorKind.AUTH, id="401"),
    pytest.param(InvalidJSON(), {}, ErrorKind.UNKNOWN, id="malformed"),
    pytest.param(Truncate(after_events=2), {}, ErrorKind.NETWORK, id="truncated"),
    pytest.param(
        ServerHang(),
        {"read_timeout": 0.2, "stream_idle_timeout": 0.2},
        ErrorKind.NETWORK,
        id="timeout",
    ),
]


@pytest.mark.parametrize(("step", "more", "kind"), FAILURES)
@pytest.mark.parametrize("streamed", [False, True])
async def test_each_failure_is_the_same_on_both_transports(
    wire: Wire, step: Any, more: dict[str, Any], kind: ErrorKind, streamed: bool
) -> None:
    seen = [await _failure(wire, t, streamed, step, **more) for t in TRANSPORTS]
    assert seen[0][0] is kind
    assert seen[0] == seen[1]
    if kind is ErrorKind.RATE_LIMIT:
        assert seen[0][2] == 7


@pytest.mark.parametrize("streamed", [False, True])
async def test_a_refused_connection_is_the_same_on_both_transports(
    wire: Wire, streamed: bool
) -> None:
    server = wire.server_cls([])
    await server.start()
    await server.stop()
    seen: list[tuple[ErrorKind, str]] = []
    for transport in TRANSPORTS:
        provider = wire.provider(server, http_transport=transport)
        try:
            with pytest.raises(ProviderError) as info:
                await _call(provider, streamed)
        finally:
            await provider.close()
        seen.append((info.value.kind, info.value.message.split(":")[0]))
    assert seen == [(ErrorKind.NETWORK, "cannot connect")] * 2


async def test_a_reply_still_arrives_on_both_transports(wire: Wire) -> None:
    for transport in TRANSPORTS:
        async with wire.server_cls([FakeReply("ok")]) as server:
            provider = wire.provider(server, http_transport=transport)
            try:
                assert (await collect(provider.stream(USER))).message.text == "ok"
            finally:
                await provider.close()
