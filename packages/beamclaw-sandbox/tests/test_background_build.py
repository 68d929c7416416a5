"""A missing image is built in the background at start (the packaged Dockerfile over a
local base image), ``/health`` says so, and a run waits for it."""

from __future__ import annotations

import asyncio
import contextlib
from pathlib import Path

import docker
import pytest

from beamclaw_sandbox import Sandbox, SandboxSettings
from beamclaw_sandbox.recipe import RECIPE_LABEL, ImageRecipe

pytestmark = [pytest.mark.docker, pytest.mark.slow]

BASE = "beamclaw-sandbox-test-base:1"
IMAGE = "beamclaw-sandbox-test-dockerfile:1"


@pytest.fixture
def local_base(sandbox_image: str) -> str:
    """The sandbox image tagged as a local base (no registry: nothing is pulled)."""
    client = docker.DockerClient(base_url="unix:///var/run/docker.sock")
    try:
        client.images.get(sandbox_image).tag(BASE)
        with contextlib.suppress(docker.errors.ImageNotFound):
            client.images.remove(IMAGE, force=True)  # so the start finds it missing
    finally:
        client.close()
    return BASE


async def test_the_gateway_builds_a_missing_image_and_exec_waits(
    local_base: str, tmp_path: Path
) -> None:
    settings = SandboxSettings(
        enabled=True, image=IMAGE, base_image=local_base, build_method="dockerfile"
    )
    sandbox = Sandbox(settings, home=tmp_path)
    await sandbox.start()
    try:
        assert sandbox.phase == "building"
        health = sandbox.health().as_dict()
        assert health["status"] == "building" and health["phase"] == "building"
        assert health["detail"].startswith("building the image (")
        outcome = await asyncio.wait_for(sandbox.run("k", "print('built')", "python", 30), 600)
        assert outcome.stdout == "built\n"
        assert sandbox.phase == "up" and sandbox.health().as_dict()["status"] == "up"
        client = docker.DockerClient(base_url="unix:///var/run/docker.sock")
        try:
            labels = client.images.get(IMAGE).labels
            assert labels[RECIPE_LABEL] == ImageRecipe.from_settings(settings).digest
            assert client.images.get(IMAGE).attrs["Config"]["User"] == "65534:65534"
        finally:
            client.close()
    finally:
        await sandbox.stop()
