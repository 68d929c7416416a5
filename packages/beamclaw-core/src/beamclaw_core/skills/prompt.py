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
from typing import TypeVar

from beamclaw_core.skills.model import Skill

_T = TypeVar("_T")

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


def _score(
    wanted: Iterable[str], name_words: frozenset[str], description_words: frozenset[str]
) -> int:
    score = 0
    for word in wanted:
        if word in name_words:
            score += NAME_WEIGHT
        elif word in description_words:
            score += DESCRIPTION_WEIGHT
    return score


def _pick(scored: Iterable[tuple[int, str, _T]], threshold: int) -> _T | None:
    """The highest score reaching ``threshold``; ties to the alphabetically first name."""
    passing = [item for item in scored if item[0] >= threshold]
    if not passing:
        return None
    passing.sort(key=lambda item: (-item[0], item[1]))
    return passing[0][2]


def match_score(skill: Skill, message: str) -> int:
    """How well ``message`` matches ``skill`` (0 = not at all)."""
    return _score(keywords(message), keywords(skill.name), keywords(skill.description))


def best_match(
    skills: Iterable[Skill], message: str | None, threshold: int = PROMOTION_THRESHOLD
) -> Skill | None:
    """The skill to promote for ``message``, or None when nothing reaches ``threshold``."""
    if not message or not message.strip():
        return None
    return _pick(((match_score(s, message), s.name, s) for s in skills), threshold)


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


_LIST_INTRO = (
    "Other available skills (open a skill's SKILL.md with read_file when the task "
    "matches its description):\n"
)


@dataclass(frozen=True, slots=True)
class _Candidate:
    skill: Skill
    name_words: frozenset[str]
    description_words: frozenset[str]
    block: str
    line: str


class SkillsRenderer:
    """:func:`build_skills_section` for one set of eligible skills and many messages.

    Each skill's keywords, full block and summary line are computed once, and the
    sections of the last :attr:`MAX_MESSAGES` distinct messages are remembered, so a
    turn's repeated requests (same message) cost a dictionary lookup. The result is
    always what :func:`build_skills_section` returns for the same arguments (it is
    implemented with this class). Thread-safe: the memo is a dict of immutable values.
    """

    MAX_MESSAGES = 32

    def __init__(self, skills: Sequence[Skill], *, threshold: int = PROMOTION_THRESHOLD) -> None:
        self.skills = tuple(skills)
        self.threshold = threshold
        ordered = sorted(self.skills, key=lambda s: s.name)
        self._always = tuple(s for s in ordered if s.metadata.always)
        self._always_blocks = tuple(_full_block(s) for s in self._always)
        self._others = tuple(
            _Candidate(
                s, keywords(s.name), keywords(s.description), _full_block(s), _summary_line(s)
            )
            for s in ordered
            if not s.metadata.always
        )
        self._memo: dict[str | None, SkillsSection] = {}

    def _promoted(self, message: str | None) -> _Candidate | None:
        if not message or not message.strip():
            return None
        wanted = keywords(message)
        return _pick(
            (
                (_score(wanted, c.name_words, c.description_words), c.skill.name, c)
                for c in self._others
            ),
            self.threshold,
        )

    def section(self, latest_user_message: str | None = None) -> SkillsSection:
        """The section for ``latest_user_message`` (empty text when there are no skills)."""
        cached = self._memo.get(latest_user_message)
        if cached is not None:
            return cached
        promoted = self._promoted(latest_user_message)
        chosen = promoted.skill if promoted is not None else None
        listed = [c for c in self._others if c.skill is not chosen]
        full = [*self._always, *([promoted.skill] if promoted is not None else [])]
        if not full and not listed:
            result = SkillsSection("", (), (), None)
        else:
            parts = ["## Skills", *self._always_blocks]
            if promoted is not None:
                parts.append(promoted.block)
            if listed:
                parts.append(_LIST_INTRO + "\n".join(c.line for c in listed))
            result = SkillsSection(
                text="\n\n".join(parts) + "\n",
                full=tuple(s.name for s in full),
                listed=tuple(c.skill.name for c in listed),
                promoted=promoted.skill.name if promoted is not None else None,
            )
        if len(self._memo) >= self.MAX_MESSAGES:
            self._memo.clear()
        self._memo[latest_user_message] = result
        return result


def build_skills_section(
    skills: Sequence[Skill],
    latest_user_message: str | None = None,
    *,
    threshold: int = PROMOTION_THRESHOLD,
) -> SkillsSection:
    """Render the skills section for already-eligible ``skills`` (empty text when none)."""
    return SkillsRenderer(skills, threshold=threshold).section(latest_user_message)
