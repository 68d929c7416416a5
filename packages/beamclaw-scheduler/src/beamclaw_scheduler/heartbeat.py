"""The heartbeat's decisions, pure: whether ``HEARTBEAT.md`` asks for anything, whether a
beat runs now (:func:`decide`), and whether an answer is the quiet ``HEARTBEAT_OK``.

Invariants (``tests/test_heartbeat.py``):

* A beat is *skipped without any LLM call* when the agent's heartbeat is off, its time has
  not come, it is outside the active hours, the last beat still runs, the person's
  session is busy, heartbeats are paused after failures, the daily background cap is
  spent — or neither ``HEARTBEAT.md`` has a task line (only headings, HTML comments and
  blank lines) nor ``TASKS.md`` an open task: an idle agent costs nothing.
* An answer is quiet when, stripped of whitespace and markdown emphasis, it is exactly
  ``HEARTBEAT_OK`` or begins or ends with it and says nothing else of substance (at most
  a few words).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import time

from beamclaw_scheduler.specs import in_window

OK_TOKEN = "HEARTBEAT_OK"  # noqa: S105 - the quiet answer, not a secret
_QUIET_REST = 30
"""Characters besides the token an answer may have and still count as quiet."""

_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


def task_lines(text: str) -> list[str]:
    """The lines of ``HEARTBEAT.md`` that ask for something: every line but headings
    (``#``), HTML comments and blank lines."""
    lines: list[str] = []
    for raw in _COMMENT.sub("", text).splitlines():
        line = raw.strip()
        if line and not line.startswith("#"):
            lines.append(line)
    return lines


def is_quiet(answer: str) -> bool:
    """Whether ``answer`` is the heartbeat's "nothing to report" (see module)."""
    text = answer.strip().strip("*_`").strip()
    if text == OK_TOKEN:
        return True
    if text.startswith(OK_TOKEN) or text.endswith(OK_TOKEN):
        rest = text.replace(OK_TOKEN, "").strip(" \n\t.!*_`")
        return len(rest) <= _QUIET_REST
    return False


def prompt(tasks: list[str], local_time: str, open_tasks: Sequence[str] = ()) -> str:
    """The message of a beat: the task lines, the open ``TASKS.md`` tasks (the agent's
    own list, reviewed on every beat) and how to answer when nothing is due."""
    listed = "\n".join(tasks) or "(none)"
    text = (
        f"[Heartbeat {local_time}] Nobody wrote to you: this is your periodic check-in. "
        "Go through your HEARTBEAT.md tasks below. If something needs your person's "
        "attention now, answer with the message for them (it is delivered). If nothing "
        f"does, answer exactly {OK_TOKEN} and nothing else.\n\nHEARTBEAT.md tasks:\n{listed}"
    )
    if open_tasks:
        mine = "\n".join(f"- [ ] {t}" for t in open_tasks)
        text += (
            "\n\nYour open tasks (TASKS.md): review them; mark a finished one done "
            "(- [x]) in TASKS.md, and schedule one that needs a set time with the scheduler "
            f"tool's task argument (a [scheduled:...] one already is).\n{mine}"
        )
    return text


@dataclass(frozen=True, slots=True)
class BeatState:
    """What :func:`decide` looks at for one agent."""

    enabled: bool
    due: bool
    """Its interval elapsed since the last beat (or start)."""
    local_time: time
    active_hours: tuple[time, time] | None
    beat_running: bool
    session_busy: bool
    paused: bool
    """Paused after ``max_failures`` consecutive failed beats."""
    over_cap: bool
    tasks: int
    """Task lines in HEARTBEAT.md plus open tasks in TASKS.md."""


def decide(state: BeatState) -> str | None:
    """None: beat now; else why not (the health view shows it)."""
    if not state.enabled:
        return "disabled"
    if not state.due:
        return "not_due"
    if state.paused:
        return "paused_after_failures"
    if state.active_hours is not None and not in_window(state.local_time, *state.active_hours):
        return "outside_active_hours"
    if state.beat_running:
        return "last_beat_running"
    if state.session_busy:
        return "session_busy"
    if state.tasks == 0:
        return "no_tasks"
    if state.over_cap:
        return "daily_cap_reached"
    return None
