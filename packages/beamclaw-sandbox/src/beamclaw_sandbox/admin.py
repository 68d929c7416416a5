"""Blocking administration of one home's sandbox, for ``beamclaw sandbox …`` and
``doctor``: the image, the containers, a build. Callers never touch the docker SDK.

Use as a context manager: the engine connection is closed on exit.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

from beamclaw_sandbox.build import BuildReport, ImageState, Progress, ensure_image, image_state
from beamclaw_sandbox.engine import connect
from beamclaw_sandbox.hardening import owner_id
from beamclaw_sandbox.pool import ContainerInfo, ContainerPool
from beamclaw_sandbox.recipe import ImageRecipe
from beamclaw_sandbox.settings import BuildMethod, SandboxSettings

if TYPE_CHECKING:
    import docker


class SandboxAdmin:
    """The engine connection, the image recipe and the container pool of ``home``."""

    def __init__(self, client: docker.DockerClient, settings: SandboxSettings, home: Path):
        self._client = client
        self.settings = settings
        self.recipe = ImageRecipe.from_settings(settings)
        self._pool = ContainerPool(client, settings, owner_id(str(home.resolve())))

    @classmethod
    def open(cls, settings: SandboxSettings, home: Path) -> SandboxAdmin:
        """Connect to the engine.

        Raises:
            DockerUnavailableError: the engine does not answer (``reason`` says why).
        """
        return cls(connect(settings.docker_url), settings, home)

    def image_state(self) -> ImageState:
        return image_state(self._client, self.recipe)

    def containers(self) -> list[ContainerInfo]:
        return self._pool.list()

    def remove(self, container_id: str) -> None:
        self._client.api.remove_container(container_id, force=True)

    def build(self, *, method: BuildMethod, progress: Progress, force: bool = False) -> BuildReport:
        """Build the image unless current (see :func:`~beamclaw_sandbox.ensure_image`)."""
        return asyncio.run(
            ensure_image(self._client, self.recipe, method=method, progress=progress, force=force)
        )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> SandboxAdmin:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
