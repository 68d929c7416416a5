"""The keys light commands read alone agree with the whole configuration's."""

from __future__ import annotations

from pathlib import Path

import pytest

from beamclaw_cli.light_config import DefaultAgentKey, default_agent, gateway_address
from beamclaw_core import CoreSettings
from beamclaw_gateway import RateLimitSettings, effective_port, load_config

ENVIRONMENTS: list[dict[str, str]] = [
    {},
    {"BEAMCLAW_PORT": "19001"},
    {"BEAMCLAW_GATEWAY__HTTP__PORT": "19002", "BEAMCLAW_CORE__DEFAULT_AGENT": "envy"},
    {"BEAMCLAW_GATEWAY__HTTP": '{"host": "127.0.0.2", "port": 19003}'},
    {"BEAMCLAW_CORE": '{"default_agent": "json"}'},
]


def test_the_default_agent_key_defaults_as_the_core() -> None:
    assert DefaultAgentKey().default_agent == CoreSettings().default_agent


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
