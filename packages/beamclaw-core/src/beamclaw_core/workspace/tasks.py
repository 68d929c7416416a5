"""``TASKS.md``: the agent's own task list in its workspace (seed 004 ADR-028; issue 26).

A task is one markdown checklist line, ``- [ ] text`` (open) or ``- [x] text`` (done);
a task the agent scheduled carries ``[scheduled:<job id>]``, which links it to that job
so it is never scheduled twice. Everything else in the file (headings, comments, notes)
is the agent's and kept as it is. The heartbeat reviews the open tasks; ``beamclaw
tasks`` and ``GET /api/tasks`` show them.

Invariants: parsing and linking are pure (text in, values or text out);
:func:`write_tasks` replaces the file atomically (temporary file, fsync, rename), so a
crash leaves the old list or the new one, never half of either.
"""

from __future__ import annotations

import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

TASKS_FILENAME = "TASKS.md"
TASKS_TEMPLATE = """# TASKS.md — my own task list

<!--
One task per line: "- [ ] what to do" while open, "- [x] what to do" once done. My
heartbeat goes through the open ones. When I schedule a job for a task (the scheduler
tool with its task argument), the line gets "[scheduled:<job id>]" and the task is not
scheduled again while that job exists.
-->

## Tasks
"""

_TASK = re.compile(r"^(?P<lead>\s*[-*]\s+\[)(?P<mark>[ xX])(?P<rest>\]\s+)(?P<body>.*?)\s*$")
_SCHEDULED = re.compile(r"\s*\[scheduled:(?P<id>[A-Za-z0-9_.-]+)\]")
_COMMENT = re.compile(r"<!--.*?-->", re.DOTALL)


@dataclass(frozen=True, slots=True)
class Task:
    """One task line of ``TASKS.md``."""

    line: int
    """0-based line number in the file."""
    text: str
    """The task without its checkbox and its schedule marker."""
    done: bool
    schedule_id: str | None
    """The job this task is linked to (``[scheduled:<id>]``), if any."""

    def view(self) -> dict[str, object]:
        """The task as the CLI's ``--json`` and ``GET /api/tasks`` show it."""
        return {
            "text": self.text,
            "done": self.done,
            "schedule_id": self.schedule_id,
            "line": self.line + 1,
        }


def _blank_comments(text: str) -> list[str]:
    """The lines of ``text`` with HTML comments blanked (line numbers kept)."""
    blanked = _COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    return blanked.split("\n")


def parse_tasks(text: str) -> list[Task]:
    """Every task line of ``text`` in order (lines inside HTML comments are examples)."""
    tasks: list[Task] = []
    for n, line in enumerate(_blank_comments(text)):
        found = _TASK.match(line)
        if found is None:
            continue
        body = found["body"]
        marker = _SCHEDULED.search(body)
        plain = _SCHEDULED.sub("", body).strip()
        if not plain:
            continue
        tasks.append(
            Task(
                line=n,
                text=plain,
                done=found["mark"] != " ",
                schedule_id=marker["id"] if marker else None,
            )
        )
    return tasks


def open_tasks(text: str) -> list[Task]:
    """The tasks of ``text`` not done yet."""
    return [t for t in parse_tasks(text) if not t.done]


def _norm(text: str) -> str:
    return " ".join(text.split()).casefold()


def find_task(tasks: list[Task], wanted: str) -> Task | None:
    """The open task ``wanted`` names: its exact text (case and spacing aside), else the
    only open task whose text contains it; None when there is no such task or several."""
    key = _norm(wanted)
    candidates = [t for t in tasks if not t.done]
    exact = [t for t in candidates if _norm(t.text) == key]
    if exact:
        return exact[0]
    partial = [t for t in candidates if key and key in _norm(t.text)]
    return partial[0] if len(partial) == 1 else None


def link_schedule(text: str, task: Task, job_id: str) -> str:
    """``text`` with ``task``'s line marked ``[scheduled:<job_id>]`` (replacing an older
    marker); every other line unchanged."""
    lines = text.split("\n")
    line = _SCHEDULED.sub("", lines[task.line]).rstrip()
    lines[task.line] = f"{line} [scheduled:{job_id}]"
    return "\n".join(lines)


def read_tasks(path: Path) -> str:
    """The text of ``TASKS.md`` at ``path`` ("" when it does not exist)."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return ""


def write_tasks(path: Path, text: str) -> None:
    """Replace ``TASKS.md`` at ``path`` with ``text`` atomically (see the invariants)."""
    write_atomic(path, text)


def write_atomic(path: Path, text: str) -> None:
    """Replace the workspace file ``path`` with ``text``: temporary file, fsync, rename,
    directory fsync (a crash leaves the old text or the new, never half)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)
    finally:
        os.close(directory)
