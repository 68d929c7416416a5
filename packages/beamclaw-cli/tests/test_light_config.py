"""The keys light commands read alone agree with the whole configuration's."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from beamclaw_cli.light_config import default_agent, gateway_address
from beamclaw_gateway import RateLimitSettings, effective_port, load_config
from beamclaw_obs import ConfigError

ENVIRONMENTS: list[dict[str, str]] = [
    {},
    {"BEAMCLAW_PORT": "19001"},
    {"BEAMCLAW_GATEWAY__HTTP__PORT": "19002", "BEAMCLAW_CORE__DEFAULT_AGENT": "envy"},
    {"BEAMCLAW_GATEWAY__HTTP": '{"host": "127.0.0.2", "port": 19003}'},
    {"BEAMCLAW_CORE": '{"default_agent": "json"}'},
    {"BEAMCLAW_GATEWAY__HTTP__PORT": " 19004 "},
    {"BEAMCLAW_GATEWAY": '{"http": {"port": "19005"}}', "BEAMCLAW_GATEWAY__HTTP__HOST": "::1"},
]


def test_with_no_file_the_light_keys_are_the_models_defaults(
    beamclaw_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beamclaw_home.mkdir(parents=True, exist_ok=True)
    monkeypatch.delenv("BEAMCLAW_PORT", raising=False)
    full = load_config().settings
    assert gateway_address() == (full.gateway.http.host, effective_port(full))
    assert default_agent() == full.core.default_agent


@pytest.mark.parametrize(
    ("toml", "env", "reader"),
    [
        ("[gateway.http]\nport = 70000\n", {}, gateway_address),
        ('[gateway.http]\nport = "soon"\n', {}, gateway_address),
        ("[gateway.http]\nport = 1.5\n", {}, gateway_address),
        ("[gateway.http]\nhost = 7\n", {}, gateway_address),
        ("", {"BEAMCLAW_GATEWAY__HTTP__PORT": "-1"}, gateway_address),
        ("", {"BEAMCLAW_GATEWAY__HTTP__PORT": "true"}, gateway_address),
        ("[core]\ndefault_agent = 3\n", {}, default_agent),
    ],
)
def test_a_value_the_full_loader_refuses_the_light_reader_refuses(
    toml: str,
    env: dict[str, str],
    reader: Callable[[], object],
    beamclaw_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    beamclaw_home.mkdir(parents=True, exist_ok=True)
    (beamclaw_home / "beamclaw.toml").write_text(toml)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError):
        load_config()
    with pytest.raises(ConfigError, match=r"beamclaw\.toml"):
        reader()


@pytest.mark.parametrize("env", ENVIRONMENTS, ids=lambda e: ",".join(e) or "none")
def test_the_light_keys_equal_the_full_loaders(
    env: dict[str, str], beamclaw_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beamclaw_home.mkdir(parents=True, exist_ok=True)
    (beamclaw_home / "beamclaw.toml").write_text(
        '[core]\ndefault_agent = "filed"\n[gateway.http]\nhost = "127.0.0.9"\nport = 18999\n'
    )
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    full = load_config().settings
    assert gateway_address() == (full.gateway.http.host, effective_port(full))
    assert default_agent() == full.core.default_agent


def test_a_wrong_rate_is_still_refused() -> None:
    with pytest.raises(ValueError, match="limits notation"):
        RateLimitSettings(per_ip="often")
