"""Exploration heartbeats, pure (seed 004 ADR-058; issue 26).

Every ``explore_every``-th beat of an agent (0: never) follows one topic of its
``CURIOSITY.md`` (one topic per line; headings, HTML comments and blank lines are not
topics) that has no note in ``explorations/`` yet, fetching at most
``explore_max_fetches`` URLs (:class:`~.fetch_cap.FetchQuota` refuses the rest), and its
answer becomes the note ``explorations/<day>-<topic slug>.md``.

Invariants: a topic is explored at most once (its note's slug marks it); a beat that is
not an exploration's turn, or finds no new topic, is an ordinary beat.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from pathlib import Path

from beamclaw_scheduler.heartbeat import task_lines

CURIOSITY_FILENAME = "CURIOSITY.md"
EXPLORATIONS_DIRNAME = "explorations"
_SLUG = re.compile(r"[^a-z0-9]+")
_NOTE = re.compile(r"^\d{4}-\d{2}-\d{2}-(?P<slug>.+)\.md$")


def topics(curiosity: str) -> list[str]:
    """The topics of ``CURIOSITY.md``'s text, in order (list bullets stripped)."""
    found: list[str] = []
    for line in task_lines(curiosity):
        topic = re.sub(r"^([-*+]|\d+[.)])\s+", "", line).strip()
        if topic:
            found.append(topic)
    return found


def slug(topic: str) -> str:
    """The topic as a file-name part: lower case, ``-`` between words, at most 60 chars."""
    return _SLUG.sub("-", topic.casefold()).strip("-")[:60].strip("-") or "topic"


def explored(note_names: Collection[str]) -> set[str]:
    """The slugs of the topics that have a note (``<day>-<slug>.md`` names)."""
    return {m["slug"] for name in note_names if (m := _NOTE.match(name))}


def is_exploration(beat_number: int, every: int) -> bool:
    """Whether the ``beat_number``-th beat (1-based) explores."""
    return every > 0 and beat_number > 0 and beat_number % every == 0


def pick_topic(candidates: list[str], done: Collection[str]) -> str | None:
    """The first topic whose slug has no note yet (None: nothing new to explore)."""
    for topic in candidates:
        if slug(topic) not in done:
            return topic
    return None


def note_path(workspace: Path, topic: str, day: str) -> Path:
    """Where the note about ``topic`` explored on ``day`` (``YYYY-MM-DD``) goes."""
    return workspace / EXPLORATIONS_DIRNAME / f"{day}-{slug(topic)}.md"


def prompt(topic: str, max_fetches: int, local_time: str) -> str:
    """The message of an exploration beat."""
    fetches = (
        f"You may fetch at most {max_fetches} URLs (further fetches are refused)"
        if max_fetches
        else "Do not fetch anything: use what you know and your memory"
    )
    return (
        f"[Exploration {local_time}] Nobody wrote to you: this beat is for your own "
        f"curiosity. Explore this topic from your CURIOSITY.md: {topic}\n{fetches}. "
        "Then answer with a short note (a few paragraphs, with the sources you used): "
        "it is saved to your explorations/ folder, not sent to anyone."
    )


def note(topic: str, local_time: str, answer: str) -> str:
    """The note's text: a heading, when, and the answer."""
    return f"# {topic}\n\nExplored {local_time}.\n\n{answer.strip()}\n"
