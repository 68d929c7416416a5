"""Skills: SKILL.md files giving the agent specialised knowledge (seed 003, docs/skills.md).

Parse (YAML frontmatter + markdown body), discover (bundled → global → per-agent, later
overriding earlier), check eligibility (binaries, environment variables, OS), render the
system-prompt section (always-skills in full, the best keyword match promoted, the rest
listed), and install requirements (apt/brew/npm/pip/download) with failures reported.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_core.skills.catalog import SkillCatalog
    from beamclaw_core.skills.discovery import (
        Discovery,
        SkippedSkill,
        agent_skills_dir,
        bundled_skills_dir,
        discover_skills,
        global_skills_dir,
    )
    from beamclaw_core.skills.eligibility import (
        RECHECK_SECONDS,
        Eligibility,
        EligibilityCache,
        check_eligibility,
        current_os,
        eligible_skills,
    )
    from beamclaw_core.skills.errors import SkillError, SkillParseError
    from beamclaw_core.skills.installer import (
        CommandOutcome,
        CommandRunner,
        InstallAttempt,
        InstallerCommands,
        InstallReport,
        SkillInstaller,
        SubprocessRunner,
    )
    from beamclaw_core.skills.model import (
        BASE_DIR_PLACEHOLDER,
        KNOWN_OS,
        InstallSpec,
        Requires,
        Skill,
        SkillMetadata,
        SkillSource,
        normalise_os,
    )
    from beamclaw_core.skills.parser import SKILL_FILE, parse_skill, parse_skill_file
    from beamclaw_core.skills.prompt import (
        PROMOTION_THRESHOLD,
        SkillsRenderer,
        SkillsSection,
        best_match,
        build_skills_section,
        keywords,
        match_score,
    )
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_core.skills.catalog": ("SkillCatalog",),
            "beamclaw_core.skills.discovery": (
                "Discovery",
                "SkippedSkill",
                "agent_skills_dir",
                "bundled_skills_dir",
                "discover_skills",
                "global_skills_dir",
            ),
            "beamclaw_core.skills.eligibility": (
                "RECHECK_SECONDS",
                "Eligibility",
                "EligibilityCache",
                "check_eligibility",
                "current_os",
                "eligible_skills",
            ),
            "beamclaw_core.skills.errors": ("SkillError", "SkillParseError"),
            "beamclaw_core.skills.installer": (
                "CommandOutcome",
                "CommandRunner",
                "InstallAttempt",
                "InstallerCommands",
                "InstallReport",
                "SkillInstaller",
                "SubprocessRunner",
            ),
            "beamclaw_core.skills.model": (
                "BASE_DIR_PLACEHOLDER",
                "KNOWN_OS",
                "InstallSpec",
                "Requires",
                "Skill",
                "SkillMetadata",
                "SkillSource",
                "normalise_os",
            ),
            "beamclaw_core.skills.parser": ("SKILL_FILE", "parse_skill", "parse_skill_file"),
            "beamclaw_core.skills.prompt": (
                "PROMOTION_THRESHOLD",
                "SkillsRenderer",
                "SkillsSection",
                "best_match",
                "build_skills_section",
                "keywords",
                "match_score",
            ),
        },
    )

__all__ = [
    "BASE_DIR_PLACEHOLDER",
    "KNOWN_OS",
    "PROMOTION_THRESHOLD",
    "RECHECK_SECONDS",
    "SKILL_FILE",
    "CommandOutcome",
    "CommandRunner",
    "Discovery",
    "Eligibility",
    "EligibilityCache",
    "InstallAttempt",
    "InstallReport",
    "InstallSpec",
    "InstallerCommands",
    "Requires",
    "Skill",
    "SkillCatalog",
    "SkillError",
    "SkillInstaller",
    "SkillMetadata",
    "SkillParseError",
    "SkillSource",
    "SkillsRenderer",
    "SkillsSection",
    "SkippedSkill",
    "SubprocessRunner",
    "agent_skills_dir",
    "best_match",
    "build_skills_section",
    "bundled_skills_dir",
    "check_eligibility",
    "current_os",
    "discover_skills",
    "eligible_skills",
    "global_skills_dir",
    "keywords",
    "match_score",
    "normalise_os",
    "parse_skill",
    "parse_skill_file",
]
