"""The [scheduler] section: its defaults, its environment override, per-agent heartbeats."""

from __future__ import annotations

import pytest
from pydantic import Field, ValidationError

from beamclaw_core import HeartbeatSettings
from beamclaw_obs import BeamclawSettingsBase, load_settings
from beamclaw_scheduler.settings import SchedulerSettings


class Root(BeamclawSettingsBase):
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)


def test_default_and_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    default = SchedulerSettings().enabled
    assert default is False
    monkeypatch.setenv("BEAMCLAW_SCHEDULER__ENABLED", "true")
    assert load_settings(Root, use_lookup=False).settings.scheduler.enabled is not default


def test_an_agents_heartbeat_keys_replace_only_what_they_set() -> None:
    shared = HeartbeatSettings(every_seconds=600, active_hours="08:00-22:00")
    own = HeartbeatSettings(every_seconds=60)
    merged = shared.overridden_by(own)
    assert merged.every_seconds == 60 and merged.active_hours == "08:00-22:00"
    assert shared.overridden_by(None) is shared


def test_active_hours_must_be_a_window() -> None:
    with pytest.raises(ValidationError, match="HH:MM-HH:MM"):
        HeartbeatSettings(active_hours="8-22")
    assert HeartbeatSettings(active_hours="22:00-06:00").active_hours == "22:00-06:00"
