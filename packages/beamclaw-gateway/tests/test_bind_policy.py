"""Security defaults: loopback bind by default; non-loopback needs a token; port checks."""

from __future__ import annotations

import socket

import pytest

from beamclaw_gateway import (
    BeamclawConfig,
    GatewayConfigError,
    PortInUseError,
    check_bind_policy,
    effective_port,
    is_loopback,
)
from beamclaw_gateway.server import check_port_free
from beamclaw_obs import Secret


def test_default_bind_is_loopback() -> None:
    cfg = BeamclawConfig()
    assert cfg.gateway.http.host == "127.0.0.1"
    check_bind_policy(cfg)


@pytest.mark.parametrize("host", ["127.0.0.1", "127.5.5.5", "::1", "localhost"])
def test_loopback_hosts(host: str) -> None:
    assert is_loopback(host)


@pytest.mark.parametrize("host", ["0.0.0.0", "192.168.1.10", "::", "example.org"])
def test_non_loopback_hosts(host: str) -> None:
    assert not is_loopback(host)


def test_public_bind_without_token_is_refused() -> None:
    cfg = BeamclawConfig()
    cfg.gateway.http.host = "0.0.0.0"
    with pytest.raises(GatewayConfigError, match="without a gateway token"):
        check_bind_policy(cfg)


def test_public_bind_with_unset_token_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = BeamclawConfig()
    cfg.gateway.http.host = "0.0.0.0"
    cfg.gateway.http.token = Secret(env="BC_TEST_TOKEN")
    with pytest.raises(GatewayConfigError, match="BC_TEST_TOKEN"):
        check_bind_policy(cfg)
    monkeypatch.setenv("BC_TEST_TOKEN", "a-long-enough-token")
    check_bind_policy(cfg)


def test_port_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    cfg = BeamclawConfig()
    assert effective_port(cfg) == 18800
    monkeypatch.setenv("BEAMCLAW_PORT", "19999")
    assert effective_port(cfg) == 19999
    monkeypatch.setenv("BEAMCLAW_PORT", "http")
    with pytest.raises(GatewayConfigError, match="not a port"):
        effective_port(cfg)


def test_port_in_use_is_detected() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        with pytest.raises(PortInUseError, match=str(port)):
            check_port_free("127.0.0.1", port)


def test_the_event_loop_follows_the_setting() -> None:
    import asyncio

    import uvloop

    from beamclaw_gateway.server import loop_runner

    assert loop_runner("auto") == ("uvloop", uvloop.run)
    assert loop_runner("uvloop") == ("uvloop", uvloop.run)
    assert loop_runner("asyncio") == ("asyncio", asyncio.run)

    async def which() -> str:
        return type(asyncio.get_running_loop()).__module__

    assert loop_runner("auto")[1](which()).startswith("uvloop")
    assert loop_runner("asyncio")[1](which()).startswith("asyncio")
