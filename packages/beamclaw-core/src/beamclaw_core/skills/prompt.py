"""The skills section of the system prompt.

* Skills with ``metadata.always: true`` are included in full.
* Every other eligible skill appears in a summary list (emoji, name, description and the
  SKILL.md path, which the agent can open with ``read_file``).
* The skill that best matches the latest user message is promoted to full content,
  placed above the list, when its score reaches :data:`PROMOTION_THRESHOLD`.

Scoring (:func:`match_score`): the user message and each skill are reduced to keyword
sets (lower-cased words of three or more letters, a trailing plural ``s`` removed,
common English stop words dropped). Each distinct message keyword found in the skill's
*name* scores 3; found only in its *description* scores 1. With the threshold at 3, a
skill is promoted when the user names it, or when three of its description keywords
appear in the message. Ties go to the alphabetically first name. The function is pure.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from beamclaw_core.skills.model import Skill

PROMOTION_THRESHOLD = 3
NAME_WEIGHT = 3
DESCRIPTION_WEIGHT = 1

STOP_WORDS = frozenset(
    [
        "the",
        "and",
        "for",
        "with",
        "that",
        "this",
        "from",
        "your",
        "you",
        "are",
        "was",
        "were",
        "will",
        "would",
        "can",
        "could",
        "should",
        "have",
        "has",
        "had",
        "not",
        "but",
        "all",
        "any",
        "how",
        "what",
        "when",
        "where",
        "which",
        "who",
        "why",
        "use",
        "using",
        "into",
        "onto",
        "about",
        "please",
        "want",
        "need",
        "make",
        "just",
        "like",
        "some",
        "more",
        "most",
        "them",
        "they",
        "their",
        "there",
        "then",
        "than",
        "its",
        "it's",
        "our",
        "out",
        "get",
        "got",
        "let",
        "lets",
        "may",
        "might",
        "also",
        "very",
        "much",
        "does",
        "did",
        "done",
        "doing",
    ]
)
_WORD = re.compile(r"[a-z0-9][a-z0-9+#.]*[a-z0-9+#]|[a-z0-9]{3,}")


def keywords(text: str) -> frozenset[str]:
    """Normalised keywords of ``text`` (see module docstring)."""
    out: set[str] = set()
    for raw in _WORD.findall(text.lower().replace("_", " ").replace("-", " ")):
        word = raw.strip(".")
        if len(word) < 3 or word in STOP_WORDS:
            continue
        if len(word) > 4 and word.endswith("s") and not word.endswith("ss"):
            word = word[:-1]
        out.add(word)
    return frozenset(out)


def match_score(skill: Skill, message: str) -> int:
    """How well ``message`` matches ``skill`` (0 = not at all)."""
    wanted = keywords(message)
    name_words = keywords(skill.name)
    description_words = keywords(skill.description)
    score = 0
    for word in wanted:
        if word in name_words:
            score += NAME_WEIGHT
        elif word in description_words:
            score += DESCRIPTION_WEIGHT
    return score


def best_match(
    skills: Iterable[Skill], message: str | None, threshold: int = PROMOTION_THRESHOLD
) -> Skill | None:
    """The skill to promote for ``message``, or None when nothing reaches ``threshold``."""
    if not message or not message.strip():
        return None
    scored = [(match_score(s, message), s.name, s) for s in skills]
    scored = [item for item in scored if item[0] >= threshold]
    if not scored:
        return None
    scored.sort(key=lambda item: (-item[0], item[1]))
    return scored[0][2]


@dataclass(frozen=True)
class SkillsSection:
    """The rendered section and what went into it."""

    text: str
    full: tuple[str, ...]
    """Names included in full (always-skills, then the promoted one)."""
    listed: tuple[str, ...]
    promoted: str | None


def _full_block(skill: Skill) -> str:
    emoji = f"{skill.metadata.emoji} " if skill.metadata.emoji else ""
    where = f"\n(skill directory: {skill.base_dir})" if skill.base_dir is not None else ""
    return (
        f"### {emoji}Skill: {skill.name}\n{skill.description}{where}\n\n{skill.content().rstrip()}"
    )


def _summary_line(skill: Skill) -> str:
    emoji = f"{skill.metadata.emoji} " if skill.metadata.emoji else ""
    where = f" ({skill.path})" if skill.path is not None else ""
    return f"- {emoji}{skill.name}: {skill.description}{where}"


def build_skills_section(
    skills: Sequence[Skill],
    latest_user_message: str | None = None,
    *,
    threshold: int = PROMOTION_THRESHOLD,
) -> SkillsSection:
    """Render the skills section for already-eligible ``skills`` (empty text when none)."""
    ordered = sorted(skills, key=lambda s: s.name)
    always = [s for s in ordered if s.metadata.always]
    others = [s for s in ordered if not s.metadata.always]
    promoted = best_match(others, latest_user_message, threshold)
    listed = [s for s in others if s is not promoted]
    full = [*always, *([promoted] if promoted is not None else [])]
    if not full and not listed:
        return SkillsSection("", (), (), None)
    parts = ["## Skills"]
    parts.extend(_full_block(s) for s in full)
    if listed:
        parts.append(
            "Other available skills (open a skill's SKILL.md with read_file when the task "
            "matches its description):\n" + "\n".join(_summary_line(s) for s in listed)
        )
    return SkillsSection(
        text="\n\n".join(parts) + "\n",
        full=tuple(s.name for s in full),
        listed=tuple(s.name for s in listed),
        promoted=promoted.name if promoted is not None else None,
    )
