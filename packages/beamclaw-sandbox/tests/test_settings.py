"""The [sandbox] section: its default and its environment override."""

from __future__ import annotations

import pytest
from pydantic import Field

from beamclaw_obs import BeamclawSettingsBase, load_settings
from beamclaw_sandbox.settings import SandboxSettings


class Root(BeamclawSettingsBase):
    sandbox: SandboxSettings = Field(default_factory=SandboxSettings)


def test_default_and_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    default = SandboxSettings().enabled
    assert default is False
    monkeypatch.setenv("BEAMCLAW_SANDBOX__ENABLED", "true")
    assert load_settings(Root, use_lookup=False).settings.sandbox.enabled is not default
