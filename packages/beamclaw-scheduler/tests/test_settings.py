"""The [scheduler] section: its default (off: nothing runs jobs yet) and its environment override."""

from __future__ import annotations

import pytest
from pydantic import Field

from beamclaw_obs import BeamclawSettingsBase, load_settings
from beamclaw_scheduler.settings import SchedulerSettings


class Root(BeamclawSettingsBase):
    scheduler: SchedulerSettings = Field(default_factory=SchedulerSettings)


def test_default_and_env_override(monkeypatch: pytest.MonkeyPatch) -> None:
    default = SchedulerSettings().enabled
    assert default is False
    monkeypatch.setenv("BEAMCLAW_SCHEDULER__ENABLED", "true")
    assert load_settings(Root, use_lookup=False).settings.scheduler.enabled is not default
