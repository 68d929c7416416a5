"""``beamclaw sandbox build|status|list|kill`` as a person runs them, on the real engine."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from beamclaw_sandbox import BeamclawSandboxError, Sandbox, SandboxSettings
from beamclaw_sandbox.testing import require_image

pytestmark = pytest.mark.docker

Run = Callable[..., Any]


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    try:
        return require_image().image
    except BeamclawSandboxError as e:
        pytest.fail(f"{e} (`make services` installs and starts Docker)")


def test_build_is_skipped_when_the_image_is_current(run_cli: Run, sandbox_image: str) -> None:
    r = run_cli("sandbox", "build")
    assert r.returncode == 0, r.stderr
    assert f"image {sandbox_image} is up to date" in r.stdout
    assert "already up to date (cached" in r.stdout


def test_build_refuses_an_unknown_method(run_cli: Run) -> None:
    r = run_cli("sandbox", "build", "--method", "magic")
    assert r.returncode == 2 and "--method must be one of" in r.stderr


def test_status_reports_engine_image_and_limits(run_cli: Run, sandbox_image: str) -> None:
    r = run_cli("sandbox", "status")
    assert r.returncode == 0, r.stderr
    assert "engine:     up" in r.stdout
    assert f"image:      {sandbox_image} present" in r.stdout
    assert "read-only root" in r.stdout and "network none" in r.stdout


def test_status_without_docker_says_why_and_fails(run_cli: Run, beamclaw_home: Path) -> None:
    beamclaw_home.mkdir(parents=True, exist_ok=True)
    (beamclaw_home / "beamclaw.toml").write_text(
        '[sandbox]\ndocker_url = "unix:///nonexistent/docker.sock"\n'
    )
    r = run_cli("sandbox", "status")
    assert r.returncode == 1
    assert "engine:     down: no Docker socket at /nonexistent/docker.sock" in r.stdout


async def test_list_and_kill_this_homes_containers(
    run_cli: Run, sandbox_image: str, beamclaw_home: Path
) -> None:
    sandbox = Sandbox(SandboxSettings(enabled=True, image=sandbox_image), home=beamclaw_home)
    await sandbox.start()
    try:
        await sandbox.run("session:s-9", "true", "bash", 10)
        listed = run_cli("sandbox", "list")
        assert listed.returncode == 0, listed.stderr
        assert "running" in listed.stdout and "session:s-9" in listed.stdout
        assert run_cli("sandbox", "kill").returncode == 2
        killed = run_cli("sandbox", "kill", "session:s-9")
        assert killed.returncode == 0, killed.stderr
        assert "removed beamclaw-sbx-" in killed.stdout
        assert run_cli("sandbox", "list").stdout.strip() == "no sandbox containers"
        missing = run_cli("sandbox", "kill", "session:s-9")
        assert missing.returncode == 1 and "no sandbox container" in missing.stderr
        # the sandbox makes a new container on its next run
        assert (await sandbox.run("session:s-9", "echo back", "bash", 10)).stdout == "back\n"
    finally:
        await sandbox.stop()


def test_doctor_reports_the_sandbox_honestly(
    run_cli: Run, sandbox_image: str, beamclaw_home: Path
) -> None:
    beamclaw_home.mkdir(parents=True, exist_ok=True)
    config = beamclaw_home / "beamclaw.toml"
    config.write_text("[sandbox]\nenabled = true\n")
    up = run_cli("doctor", "--offline")
    assert "[ok] sandbox engine: Docker answers" in up.stdout
    assert f"[ok] sandbox image: {sandbox_image}" in up.stdout
    assert "[ok] sandbox limits: non-root, no capabilities, read-only root" in up.stdout
    config.write_text('[sandbox]\nenabled = true\ndocker_url = "unix:///nonexistent/d.sock"\n')
    down = run_cli("doctor", "--offline")
    assert down.returncode == 1
    assert "[fail] sandbox: Docker is not available: no Docker socket" in down.stdout
