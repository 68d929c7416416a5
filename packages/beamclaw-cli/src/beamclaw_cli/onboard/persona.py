"""The agent's name and personality in its workspace files (what the system prompt reads).

The name goes on IDENTITY.md's ``- **Name:**`` line and into SOUL.md's opening
``I am <name>,``; the personality is SOUL.md's ``## Personality`` section. Each edit
replaces only its own line or section, so running onboard again changes only what was
chosen and keeps whatever else the person or the agent wrote.
"""

from __future__ import annotations

import re
from pathlib import Path

from beamclaw_core.workspace import BootstrapFile

PERSONALITY_HEADING = "## Personality"

_NAME_LINE = re.compile(r"^- \*\*Name:\*\*.*$", re.MULTILINE)
_SOUL_OPENING = re.compile(r"^I am [^,\n]+,", re.MULTILINE)
_SECTION = re.compile(
    rf"^{re.escape(PERSONALITY_HEADING)}\n.*?(?=^## |\Z)", re.MULTILINE | re.DOTALL
)


def current_name(identity: str) -> str | None:
    """The name on IDENTITY.md's name line, if any."""
    match = _NAME_LINE.search(identity)
    return match[0].removeprefix("- **Name:**").strip() if match else None


def with_name_in_identity(identity: str, name: str) -> str:
    line = f"- **Name:** {name}"
    if _NAME_LINE.search(identity):
        return _NAME_LINE.sub(lambda _m: line, identity, count=1)
    return identity.rstrip("\n") + f"\n\n{line}\n"


def with_name_in_soul(soul: str, name: str) -> str:
    return _SOUL_OPENING.sub(lambda _m: f"I am {name},", soul, count=1)


def with_personality(soul: str, personality: str) -> str:
    section = f"{PERSONALITY_HEADING}\n{personality.strip()}\n\n"
    if _SECTION.search(soul):
        return _SECTION.sub(lambda _m: section, soul, count=1).rstrip("\n") + "\n"
    return soul.rstrip("\n") + f"\n\n{section}".rstrip("\n") + "\n"


def write_persona(workspace: Path, name: str | None, personality: str | None) -> None:
    """Apply the chosen name and/or personality to the workspace's IDENTITY.md and SOUL.md."""
    identity_path = workspace / BootstrapFile.IDENTITY.value
    soul_path = workspace / BootstrapFile.SOUL.value
    identity = identity_path.read_text(encoding="utf-8") if identity_path.exists() else ""
    soul = soul_path.read_text(encoding="utf-8") if soul_path.exists() else ""
    if name:
        identity = with_name_in_identity(identity, name)
        soul = with_name_in_soul(soul, name)
    if personality:
        soul = with_personality(soul, personality)
    identity_path.write_text(identity, encoding="utf-8")
    soul_path.write_text(soul, encoding="utf-8")
