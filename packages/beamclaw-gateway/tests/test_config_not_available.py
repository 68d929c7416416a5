"""Keys whose feature does not exist yet are refused at load, with the fix in the message."""

from __future__ import annotations

from pathlib import Path

import pytest

from beamclaw_gateway import load_config
from beamclaw_obs import ConfigError


def _load(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "beamclaw.toml").write_text(text)
    load_config()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            "[gateway.channels.tui]\nenabled = false\n",
            "gateway.channels.tui.enabled = false: turning the TUI channel off",
        ),
    ],
)
def test_a_key_nothing_reads_is_refused(beamclaw_home: Path, text: str, expected: str) -> None:
    with pytest.raises(ConfigError) as info:
        _load(beamclaw_home, text)
    message = str(info.value)
    assert expected in message
    assert "is not available yet" in message and "remove" in message


def test_an_environment_override_is_refused_too(
    beamclaw_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BEAMCLAW_GATEWAY__CHANNELS__TUI__ENABLED", "false")
    with pytest.raises(ConfigError, match=r"gateway\.channels\.tui\.enabled = false"):
        load_config()


def test_the_defaults_written_out_still_load(beamclaw_home: Path) -> None:
    _load(
        beamclaw_home,
        "[sandbox]\nenabled = false\n[scheduler]\nenabled = false\n"
        "[gateway.channels.telegram]\nenabled = false\n[gateway.channels.tui]\nenabled = true\n",
    )
    loaded = load_config()
    assert loaded.settings.scheduler.enabled is False
    assert loaded.settings.sandbox.enabled is False


def test_the_scheduler_is_available(beamclaw_home: Path) -> None:
    _load(beamclaw_home, "[scheduler]\nenabled = true\n[scheduler.heartbeat]\nevery_seconds = 60\n")
    assert load_config().settings.scheduler.heartbeat.every_seconds == 60


def test_the_sandbox_loads_enabled(beamclaw_home: Path) -> None:
    """Issue 21 built the sandbox: ``enabled = true`` is a working key now."""
    _load(beamclaw_home, '[sandbox]\nenabled = true\nscope = "agent"\n')
    loaded = load_config()
    assert loaded.settings.sandbox.enabled is True
    assert loaded.settings.sandbox.scope == "agent"
