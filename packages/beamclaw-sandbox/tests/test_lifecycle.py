"""Containers over time on the real engine: created lazily and reused per scope key,
removed at a session's end and at stop, orphans reaped after a crash (only this home's),
and an engine or image that is not there reported with the reason."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import docker
import pytest

from beamclaw_sandbox import Sandbox, SandboxSettings, SandboxUnavailableError
from beamclaw_sandbox.hardening import OWNER_LABEL, SANDBOX_LABEL
from beamclaw_sandbox.recipe import ImageRecipe
from beamclaw_sandbox.testing import require_image

pytestmark = pytest.mark.docker


def containers_of(owner: str) -> list[str]:
    client = docker.DockerClient(base_url="unix:///var/run/docker.sock")
    try:
        found = client.api.containers(
            all=True, filters={"label": [f"{SANDBOX_LABEL}=1", f"{OWNER_LABEL}={owner}"]}
        )
        return sorted(c["Names"][0].lstrip("/") for c in found)
    finally:
        client.close()


async def test_no_container_before_the_first_run_then_one_per_session(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox()
    assert sandbox.phase == "up" and sandbox.offered
    assert containers_of(sandbox.owner) == []
    a = sandbox.scope_key("s-a", "default")
    b = sandbox.scope_key("s-b", "default")
    await sandbox.run(a, "echo 1 > mark", "bash", 10)
    await sandbox.run(b, "true", "bash", 10)
    assert len(containers_of(sandbox.owner)) == 2
    # reused: the file written by the first run of session a is still there
    assert (await sandbox.run(a, "cat mark", "bash", 10)).stdout == "1\n"
    assert (await sandbox.run(b, "cat mark", "bash", 10)).exit_status == 1
    assert await sandbox.end_session("s-a")
    assert containers_of(sandbox.owner) == [sandbox.pool.spec(b).name]  # type: ignore[union-attr]
    assert not await sandbox.end_session("s-a")
    await sandbox.stop()
    assert containers_of(sandbox.owner) == []


async def test_agent_scope_shares_a_container_across_sessions(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox(scope="agent")
    first = sandbox.scope_key("s-a", "default")
    assert first == sandbox.scope_key("s-b", "default") == "agent:default"
    await sandbox.run(first, "echo shared > f", "bash", 10)
    assert (await sandbox.run(sandbox.scope_key("s-b", "default"), "cat f", "bash", 10)).stdout == (
        "shared\n"
    )
    assert not await sandbox.end_session("s-a")  # agent containers outlive sessions
    assert len(containers_of(sandbox.owner)) == 1


async def test_a_container_removed_behind_our_back_is_replaced(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox: Sandbox = await make_sandbox()
    await sandbox.run("k", "true", "bash", 10)
    (name,) = containers_of(sandbox.owner)
    client = docker.DockerClient(base_url="unix:///var/run/docker.sock")
    client.containers.get(name).remove(force=True)
    client.close()
    assert (await sandbox.run("k", "echo again", "bash", 10)).stdout == "again\n"


async def test_the_reaper_removes_this_homes_orphans_after_a_crash(
    make_sandbox: Callable[..., Any], tmp_path: Path
) -> None:
    crashed: Sandbox = await make_sandbox(home=tmp_path / "home")
    await crashed.run("session:old", "true", "bash", 10)
    other_home: Sandbox = await make_sandbox(home=tmp_path / "other")
    await other_home.run("session:theirs", "true", "bash", 10)
    orphans = containers_of(crashed.owner)
    assert len(orphans) == 1
    # the process died without stop(): a new sandbox on the same home starts
    restarted: Sandbox = await make_sandbox(home=tmp_path / "home")
    assert restarted.owner == crashed.owner
    assert containers_of(restarted.owner) == []
    assert len(containers_of(other_home.owner)) == 1  # another home's are not touched


async def test_docker_not_running_means_down_with_the_reason(tmp_path: Path) -> None:
    sandbox = Sandbox(
        SandboxSettings(enabled=True, docker_url="unix:///nonexistent/docker.sock"),
        home=tmp_path,
    )
    await sandbox.start()
    assert sandbox.phase == "down" and not sandbox.offered
    assert "no Docker socket at /nonexistent/docker.sock" in sandbox.reason
    health = sandbox.health().as_dict()
    assert health["status"] == "down" and "dockerd" in health["detail"]
    with pytest.raises(SandboxUnavailableError, match="no Docker socket"):
        await sandbox.run("k", "true", "bash", 5)
    await sandbox.stop()


async def test_a_missing_image_without_build_on_start_says_how_to_build(
    tmp_path: Path,
) -> None:
    require_image()  # the engine answers
    sandbox = Sandbox(
        SandboxSettings(enabled=True, image="beamclaw-sandbox-absent:0", build_on_start=False),
        home=tmp_path,
    )
    await sandbox.start()
    assert sandbox.phase == "down" and sandbox.offered  # the engine is there
    assert "beamclaw-sandbox-absent:0 is missing: run `beamclaw sandbox build`" in sandbox.reason
    with pytest.raises(SandboxUnavailableError, match="beamclaw sandbox build"):
        await sandbox.run("k", "true", "bash", 5)
    await sandbox.stop()


async def test_an_image_from_another_recipe_counts_as_stale(sandbox_image: str) -> None:
    from beamclaw_sandbox import connect, image_state

    client = connect(None)
    try:
        current = ImageRecipe.from_settings(SandboxSettings(image=sandbox_image))
        other = ImageRecipe.from_settings(
            SandboxSettings(image=sandbox_image, extra_packages=["jq"])
        )
        assert image_state(client, current) == "present"
        assert image_state(client, other) == "stale"
    finally:
        client.close()
