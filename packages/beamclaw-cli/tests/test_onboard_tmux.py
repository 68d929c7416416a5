"""``beamclaw onboard`` in a real terminal (tmux): prompts, hidden key, test call."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from beamclaw_core.testing import FakeReply

from .conftest import BEAMCLAW
from .tui_support import ThreadedFakeLLM, Tmux

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

KEY = "sk-typed-in-tmux-0123456789abcdef"


def test_onboard_in_a_terminal_hides_the_key_and_shows_the_answer(beamclaw_home: Path) -> None:
    env = {
        "BEAMCLAW_HOME": str(beamclaw_home),
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(beamclaw_home.parent),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
    }
    with ThreadedFakeLLM([FakeReply("Hello from a real terminal.")]) as llm:
        term = Tmux([BEAMCLAW, "onboard"], env, beamclaw_home.parent, size="160x40")
        try:
            for prompt, answer in [
                ("Provider [openrouter]:", "5"),
                ("Base URL", llm.base_url),
                ("Model [gpt-4o-mini]:", "fake-tmux"),
                ("API key (input hidden", KEY),
                ("Agent name", "Tess"),
                ("Personality", "Plain-spoken."),
                ("Require a gateway token on the API? [y/N]:", "n"),
            ]:
                term.wait_for(prompt, timeout=60)
                term.type(answer)
                term.send("Enter")
            screen = term.wait_for("TUI-EXIT-CODE=", timeout=60)
        finally:
            term.close()
    assert "the model answered: Hello from a real terminal." in screen
    assert "TUI-EXIT-CODE=0" in screen
    assert KEY not in screen
    config = (beamclaw_home / "beamclaw.toml").read_text()
    assert KEY not in config and 'model = "fake-tmux"' in config
    assert (beamclaw_home / "secrets" / "custom_api_key").read_text().strip() == KEY
