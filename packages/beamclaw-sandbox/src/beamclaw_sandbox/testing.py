"""Test support: the real engine and the real image, built once and cached.

``require_image()`` connects to the Docker engine and builds the default sandbox image
when it is missing (the same image ``beamclaw sandbox build`` makes, so a developer's
cache and CI's are one). It raises :class:`DockerUnavailableError` or
:class:`ImageBuildError` with the reason; test suites turn that into a failure, never a
skip (``make test`` starts dockerd and builds the image before pytest runs, so no test
pays the build inside pytest's per-test timeout).
"""

from __future__ import annotations

import asyncio
import functools
import sys

from beamclaw_sandbox.build import BuildReport, ensure_image
from beamclaw_sandbox.engine import connect
from beamclaw_sandbox.recipe import ImageRecipe
from beamclaw_sandbox.settings import SandboxSettings


@functools.cache
def require_image(image: str | None = None) -> BuildReport:
    """Build (once per process, and only when missing) the sandbox image for tests."""
    settings = SandboxSettings() if image is None else SandboxSettings(image=image)
    client = connect(settings.docker_url)
    try:
        recipe = ImageRecipe.from_settings(settings)

        def show(line: str) -> None:
            print(f"[sandbox image] {line}", file=sys.stderr, flush=True)

        return asyncio.run(ensure_image(client, recipe, method="auto", progress=show))
    finally:
        client.close()


__all__ = ["require_image"]
