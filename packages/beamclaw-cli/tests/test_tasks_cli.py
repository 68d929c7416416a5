"""``beamclaw tasks``: each agent's TASKS.md, read from the workspaces without a gateway."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from beamclaw_cli.app import main
from beamclaw_core.workspace import TASKS_FILENAME, agent_dir, create_agent, write_tasks


def _beamclaw(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_tasks_lists_open_tasks_and_all_with_their_jobs(
    beamclaw_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    create_agent("ops")
    code, out, _err = _beamclaw(capsys, "tasks")
    assert code == 0 and out.strip() == "no open tasks"
    write_tasks(
        agent_dir("ops") / TASKS_FILENAME,
        "# TASKS.md\n- [ ] Rotate the logs [scheduled:j9]\n- [x] Renew the certificate\n",
    )
    code, out, _err = _beamclaw(capsys, "tasks")
    assert code == 0
    assert out.splitlines() == ["ops              [ ] Rotate the logs  (scheduled as j9)"]
    code, out, _err = _beamclaw(capsys, "tasks", "--all", "--json", "--agent", "ops")
    assert [(t["text"], t["done"], t["schedule_id"]) for t in json.loads(out)] == [
        ("Rotate the logs", False, "j9"),
        ("Renew the certificate", True, None),
    ]
    code, _out, err = _beamclaw(capsys, "tasks", "--agent", "nobody")
    assert code == 1 and "no agent 'nobody'" in err
