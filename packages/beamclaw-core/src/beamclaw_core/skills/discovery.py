"""Finding skills: bundled → global → per-agent, later sources overriding earlier.

Layout (seed 003):

1. bundled: ``beamclaw_core/skills/bundled/<name>/SKILL.md`` (package data);
2. global: ``$BEAMCLAW_HOME/skills/<name>/SKILL.md``;
3. per-agent: ``$BEAMCLAW_HOME/agents/<agent_id>/skills/<name>/SKILL.md``.

A skill overrides another of the same *frontmatter name* (not directory name) from an
earlier source. A SKILL.md that cannot be parsed is skipped; the reason is logged and
returned in :attr:`Discovery.skipped`. Discovery never raises for bad skill files.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from loguru import logger

from beamclaw_core.skills.errors import SkillParseError
from beamclaw_core.skills.model import Skill, SkillSource
from beamclaw_core.skills.parser import SKILL_FILE, parse_skill_file
from beamclaw_obs import beamclaw_home


@functools.cache
def bundled_skills_dir() -> Path:
    """The directory of the skills shipped with beamclaw-core (looked up once: the
    package does not move under a running process)."""
    return Path(str(resources.files("beamclaw_core.skills") / "bundled"))


def global_skills_dir(home: Path | None = None) -> Path:
    return (home or beamclaw_home()) / "skills"


def agent_skills_dir(agent_id: str, home: Path | None = None) -> Path:
    return (home or beamclaw_home()) / "agents" / agent_id / "skills"


@dataclass(frozen=True)
class SkippedSkill:
    """A SKILL.md that was not loaded, and why."""

    path: Path
    reason: str


@dataclass(frozen=True)
class Discovery:
    """The effective skills (sorted by name) and what was skipped or overridden."""

    skills: tuple[Skill, ...]
    skipped: tuple[SkippedSkill, ...] = ()
    overridden: tuple[Skill, ...] = ()

    def get(self, name: str) -> Skill | None:
        return next((s for s in self.skills if s.name == name), None)


def _scan(directory: Path, source: SkillSource) -> tuple[list[Skill], list[SkippedSkill]]:
    found: list[Skill] = []
    skipped: list[SkippedSkill] = []
    if not directory.is_dir():
        return found, skipped
    for child in sorted(directory.iterdir(), key=lambda p: p.name):
        skill_file = child / SKILL_FILE
        if not child.is_dir() or not skill_file.is_file():
            continue
        try:
            found.append(parse_skill_file(skill_file, source))
        except SkillParseError as e:
            logger.warning("skill skipped: {}", e)
            skipped.append(SkippedSkill(skill_file, e.reason))
    return found, skipped


def discover_skills(
    agent_id: str | None = None,
    *,
    home: Path | None = None,
    bundled_dir: Path | None = None,
    extra_dirs: Iterable[tuple[Path, SkillSource]] = (),
) -> Discovery:
    """Load every skill visible to ``agent_id`` (global and bundled only when None)."""
    sources: list[tuple[Path, SkillSource]] = [
        (bundled_dir or bundled_skills_dir(), SkillSource.BUNDLED),
        (global_skills_dir(home), SkillSource.GLOBAL),
    ]
    if agent_id is not None:
        sources.append((agent_skills_dir(agent_id, home), SkillSource.AGENT))
    sources.extend(extra_dirs)
    effective: dict[str, Skill] = {}
    overridden: list[Skill] = []
    skipped: list[SkippedSkill] = []
    for directory, source in sources:
        found, bad = _scan(directory, source)
        skipped.extend(bad)
        for skill in found:
            previous = effective.get(skill.name)
            if previous is not None:
                overridden.append(previous)
            effective[skill.name] = skill
    return Discovery(
        skills=tuple(effective[n] for n in sorted(effective)),
        skipped=tuple(skipped),
        overridden=tuple(overridden),
    )
