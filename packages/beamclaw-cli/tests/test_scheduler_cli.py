"""``beamclaw scheduler``: through the running gateway's ``/api/schedules``; without one,
a clear error."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from beamclaw_cli.app import main
from beamclaw_cli.daemon import home_lock
from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway.testing import live_gateway, quiet_config


async def beamclaw(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = await asyncio.to_thread(main, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


async def test_without_a_gateway_it_says_so(
    beamclaw_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = await beamclaw(capsys, "scheduler", "list")
    assert code == 1 and "no gateway is running" in err


async def test_add_list_pause_resume_cancel(
    beamclaw_home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    config = quiet_config()
    config.scheduler.enabled = True
    async with live_gateway(ScriptedProvider([Reply("x")], repeat_last=True), config) as gw:
        monkeypatch.setenv("BEAMCLAW_PORT", str(gw.port))
        with home_lock(beamclaw_home):
            code, out, err = await beamclaw(
                capsys,
                "scheduler",
                "add",
                "daily digest",
                "--cron",
                "0 9 * * *",
                "--timezone",
                "Europe/Berlin",
            )
            assert code == 0, err
            job_id = out.split()[1].rstrip(":")
            listed = await beamclaw(capsys, "scheduler", "list")
            paused = await beamclaw(capsys, "scheduler", "pause", job_id)
            status = (await beamclaw(capsys, "scheduler", "list", "--json"))[1]
            resumed = await beamclaw(capsys, "scheduler", "resume", job_id)
            bad = await beamclaw(capsys, "scheduler", "add", "x", "--cron", "99 * * * *")
            cancelled = await beamclaw(capsys, "scheduler", "cancel", job_id)
            again = await beamclaw(capsys, "scheduler", "cancel", job_id)
            empty = await beamclaw(capsys, "scheduler", "list")
    assert job_id in listed[1] and "cron '0 9 * * *' Europe/Berlin" in listed[1]
    assert paused[1].strip() == f"paused {job_id}" and '"status": "paused"' in status
    assert resumed[0] == 0 and resumed[1].startswith(f"resumed {job_id}")
    assert bad[0] == 1 and "(cron)" in bad[2]
    assert cancelled[1].strip() == f"cancelled {job_id}"
    assert again[0] == 1 and "no scheduled job" in again[2]
    assert empty[1].strip() == "no scheduled jobs"
