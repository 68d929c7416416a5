"""Daemon lifecycle through the real entry point: start → status → second start → stop."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from .conftest import BEAMCLAW, Run, free_port


def test_start_status_refuse_second_stop_cycle(run_cli: Run, beamclaw_home: Path) -> None:
    env = {"BEAMCLAW_PORT": str(free_port())}
    started = run_cli("start", "--timeout", "40", env=env)
    try:
        assert started.returncode == 0, started.stderr
        assert "BeamClaw started (pid" in started.stdout
        pid = int((beamclaw_home / "beamclaw.pid").read_text())
        os.kill(pid, 0)  # alive

        status = run_cli("status", env=env)
        assert status.returncode == 0, status.stderr
        assert "running on http://127.0.0.1:" in status.stdout
        assert "database" in status.stdout and "up" in status.stdout
        as_json = json.loads(run_cli("status", "--json", env=env).stdout)
        assert as_json["running"] is True and as_json["pid"] == pid

        second = run_cli("start", env=env)
        assert second.returncode == 1
        assert f"already running (pid {pid})" in second.stderr

        foreground = run_cli("serve", env={"BEAMCLAW_PORT": str(free_port())})
        assert foreground.returncode == 1
        assert "already running" in foreground.stderr
    finally:
        stopped = run_cli("stop", env=env)
    assert stopped.returncode == 0
    assert f"BeamClaw stopped (pid {pid})" in stopped.stdout
    assert "killed" not in stopped.stdout
    assert not (beamclaw_home / "beamclaw.pid").exists()
    after = run_cli("status", env=env)
    assert after.returncode == 1
    assert "not running" in after.stderr
    log = (beamclaw_home / "logs" / "daemon.log").read_text()
    assert "Traceback" not in log


def test_stop_when_not_running(run_cli: Run) -> None:
    r = run_cli("stop")
    assert r.returncode == 0
    assert "not running" in r.stdout


def test_stale_pid_file_after_kill_9_does_not_block_start(
    run_cli: Run, beamclaw_home: Path
) -> None:
    port = free_port()
    env = {**os.environ, "BEAMCLAW_PORT": str(port)}
    proc = subprocess.Popen(
        [BEAMCLAW, "serve"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    deadline = time.monotonic() + 30
    while not (beamclaw_home / "beamclaw.pid").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    assert (beamclaw_home / "beamclaw.pid").exists()  # left behind by kill -9
    assert run_cli("stop").stdout.startswith("BeamClaw is not running")
    started = run_cli("start", env={"BEAMCLAW_PORT": str(port)})
    try:
        assert started.returncode == 0, started.stderr
    finally:
        assert run_cli("stop").returncode == 0


def test_restart(run_cli: Run, beamclaw_home: Path) -> None:
    env = {"BEAMCLAW_PORT": str(free_port())}
    assert run_cli("start", env=env).returncode == 0
    try:
        first = int((beamclaw_home / "beamclaw.pid").read_text())
        r = run_cli("restart", env=env)
        assert r.returncode == 0, r.stderr
        second = int((beamclaw_home / "beamclaw.pid").read_text())
        assert second != first
    finally:
        run_cli("stop", env=env)


def test_start_failure_reports_cause(run_cli: Run, beamclaw_home: Path) -> None:
    url = f"postgresql://u@127.0.0.1:{free_port()}/db"
    r = run_cli(
        "start",
        "--timeout",
        "20",
        env={"BEAMCLAW_DATABASE_URL": url, "BEAMCLAW_PORT": str(free_port())},
    )
    assert r.returncode == 1
    assert "exited during start-up" in r.stderr
    assert "unavailable" in r.stderr
