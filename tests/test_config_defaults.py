"""config/beamclaw.toml spells out exactly the packaged defaults."""

from __future__ import annotations

from pathlib import Path

from beamclaw_gateway import BeamclawConfig, load_config

ROOT = Path(__file__).resolve().parent.parent


def test_repository_config_equals_model_defaults() -> None:
    loaded = load_config(ROOT / "config" / "beamclaw.toml")
    assert loaded.warnings == []
    assert loaded.settings.model_dump() == BeamclawConfig().model_dump()
