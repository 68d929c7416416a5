"""``TASKS.md``: the checklist parser, the schedule marker, the atomic write."""

from __future__ import annotations

from pathlib import Path

from beamclaw_core.workspace import (
    TASKS_TEMPLATE,
    find_task,
    link_schedule,
    open_tasks,
    parse_tasks,
    read_tasks,
    write_tasks,
)

LIST = """# TASKS.md
<!--
- [ ] an example inside a comment is no task
-->
## Tasks
- [ ] Water the plants on Friday
- [x] Book the dentist
* [ ] Renew the passport [scheduled:job42]
- [ ]
Some note that is not a task.
"""


def test_the_template_holds_no_task() -> None:
    assert parse_tasks(TASKS_TEMPLATE) == []


def test_tasks_are_checklist_lines_outside_comments() -> None:
    tasks = parse_tasks(LIST)
    assert [(t.text, t.done, t.schedule_id) for t in tasks] == [
        ("Water the plants on Friday", False, None),
        ("Book the dentist", True, None),
        ("Renew the passport", False, "job42"),
    ]
    assert [t.line for t in tasks] == [5, 6, 7]
    assert [t.text for t in open_tasks(LIST)] == [
        "Water the plants on Friday",
        "Renew the passport",
    ]


def test_a_task_is_found_by_its_text_or_a_unique_part() -> None:
    tasks = open_tasks(LIST)
    assert find_task(tasks, "water the plants  on friday") is tasks[0]
    assert find_task(tasks, "passport") is tasks[1]
    assert find_task(tasks, "the") is None, "ambiguous"
    assert find_task(tasks, "dentist") is None, "done tasks are not scheduled"


def test_linking_marks_only_that_line_and_replaces_an_old_marker() -> None:
    tasks = open_tasks(LIST)
    linked = link_schedule(LIST, tasks[0], "abc")
    assert "- [ ] Water the plants on Friday [scheduled:abc]" in linked
    relinked = link_schedule(linked, open_tasks(linked)[1], "new1")
    assert "* [ ] Renew the passport [scheduled:new1]" in relinked
    assert "job42" not in relinked
    assert relinked.replace(" [scheduled:abc]", "").replace("new1", "job42") == LIST


def test_write_replaces_the_file_whole(tmp_path: Path) -> None:
    path = tmp_path / "agent" / "TASKS.md"
    assert read_tasks(path) == ""
    write_tasks(path, LIST)
    assert read_tasks(path) == LIST
    write_tasks(path, TASKS_TEMPLATE)
    assert read_tasks(path) == TASKS_TEMPLATE
    assert [p.name for p in path.parent.iterdir()] == ["TASKS.md"], "no temporary file left"
