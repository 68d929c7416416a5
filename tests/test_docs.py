"""Docs stay true: the generated configuration key reference is current."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def test_configuration_reference_is_current() -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "gen_config_docs.py"), "--check"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr


def test_readme_starts_with_the_two_commands() -> None:
    head = "\n".join((ROOT / "README.md").read_text().splitlines()[:10])
    assert "make run" in head and "make test" in head
