"""Errors of the skills system (subclasses of :class:`BeamclawCoreError`)."""

from __future__ import annotations

from pathlib import Path

from beamclaw_core.errors import BeamclawCoreError


class SkillError(BeamclawCoreError):
    """Base of skills errors."""


class SkillParseError(SkillError):
    """A SKILL.md that cannot be used; discovery skips it and logs ``reason``."""

    def __init__(self, path: Path | None, reason: str) -> None:
        self.path = path
        self.reason = reason
        where = str(path) if path is not None else "SKILL.md"
        super().__init__(f"{where}: {reason}")
