"""The sandbox as the gateway runs it: engine, image, containers and its health.

States: ``starting`` → ``up`` (engine answers, image present), ``building`` (image being
built in the background; runs wait for it) or ``down`` (with the reason: Docker not
running, image missing and not built, build failed).

Invariants:

* :meth:`Sandbox.start` never raises for an unavailable engine: the state says why, and
  :attr:`Sandbox.offered` is False, so the ``exec`` tool is not offered;
* orphans of this home (a crash's leftovers) are removed at start, before any run;
* a run that outlives its host deadline, or whose processes survive its timeout (a
  fork bomb), removes its container: nothing of it keeps running;
* :meth:`Sandbox.stop` cancels a build in progress and removes every container;
* with a :class:`~beamclaw_sandbox.bridge.ToolBridge`, a run given its session gets a
  bridge token valid exactly while it runs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from loguru import logger

from beamclaw_obs import ComponentHealth, HealthState
from beamclaw_sandbox.bridge import (
    CONTAINER_SOCKET_DIR,
    CONTAINER_TOOLS_DIR,
    SOCKET_NAME,
    ToolBridge,
)
from beamclaw_sandbox.build import ensure_image, image_state
from beamclaw_sandbox.engine import connect
from beamclaw_sandbox.errors import (
    DockerUnavailableError,
    ImageBuildError,
    SandboxUnavailableError,
)
from beamclaw_sandbox.hardening import owner_id
from beamclaw_sandbox.pii import BUILTIN_PATTERNS, PiiVault, custom_patterns
from beamclaw_sandbox.pool import ContainerInfo, ContainerPool
from beamclaw_sandbox.recipe import ImageRecipe
from beamclaw_sandbox.runner import Language, RunOutcome, run_script
from beamclaw_sandbox.settings import SandboxSettings
from beamclaw_tools import SessionRef

if TYPE_CHECKING:
    import docker

Phase = Literal["starting", "building", "up", "down"]
Connector = Callable[[str | None], "docker.DockerClient"]
BUILD_WAIT_SECONDS = 600.0
"""How long a run waits for an image build in progress."""


class Sandbox:
    """Engine connection, image, :class:`ContainerPool` and state of one BeamClaw home."""

    def __init__(
        self,
        settings: SandboxSettings,
        *,
        home: Path,
        host_env: Mapping[str, str] | None = None,
        connector: Connector = connect,
        bridge: ToolBridge | None = None,
    ) -> None:
        self.bridge = bridge
        self.pii: PiiVault | None = None
        if settings.pii:
            self.pii = PiiVault((*BUILTIN_PATTERNS, *custom_patterns(settings.pii_patterns)))
        if bridge is not None:
            bridge.pii = self.pii
        self.settings = settings
        self.recipe = ImageRecipe.from_settings(settings)
        self.owner = owner_id(str(home.resolve()))
        self._host_env = host_env
        self._connector = connector
        self._client: docker.DockerClient | None = None
        self._pool: ContainerPool | None = None
        self._phase: Phase = "starting"
        self._reason = ""
        self._progress = ""
        self._build: asyncio.Task[None] | None = None
        self._build_started = 0.0

    # ---------------------------------------------------------------- state

    @property
    def phase(self) -> Phase:
        return self._phase

    @property
    def reason(self) -> str:
        """Why the sandbox is down (empty otherwise)."""
        return self._reason

    @property
    def offered(self) -> bool:
        """Whether the ``exec`` tool should be offered: the engine answered at start."""
        return self._pool is not None

    def health(self) -> ComponentHealth:
        """``/health``'s view: up, building, starting, or down with the reason."""
        data: dict[str, object] = {"phase": self._phase, "image": self.recipe.image}
        if self._phase == "up":
            return ComponentHealth(HealthState.UP, data=data)
        if self._phase == "building":
            elapsed = time.monotonic() - self._build_started
            detail = f"building the image ({elapsed:.0f} s): {self._progress}"
            return ComponentHealth(HealthState.BUILDING, detail, data)
        if self._phase == "starting":
            return ComponentHealth(HealthState.STARTING, "connecting to Docker", data)
        return ComponentHealth(HealthState.DOWN, self._reason, data)

    def _down(self, reason: str) -> None:
        self._phase = "down"
        self._reason = reason
        logger.warning("sandbox down: {}", reason)

    # ---------------------------------------------------------------- life cycle

    async def start(self) -> None:
        """Connect, reap orphans, check the image (building it in the background)."""
        try:
            self._client = await asyncio.to_thread(self._connector, self.settings.docker_url)
        except DockerUnavailableError as e:
            self._down(e.reason)
            return
        binds: dict[str, str] = {}
        extra_env: dict[str, str] = {}
        if self.bridge is not None:
            await self.bridge.start()
            binds = self.bridge.binds()
            extra_env = {
                "BEAMCLAW_BRIDGE": f"{CONTAINER_SOCKET_DIR}/{SOCKET_NAME}",
                "PYTHONPATH": CONTAINER_TOOLS_DIR,
            }
        self._pool = ContainerPool(
            self._client,
            self.settings,
            self.owner,
            host_env=self._host_env,
            binds=binds,
            extra_env=extra_env,
        )
        reaped = await asyncio.to_thread(self._pool.reap)
        if reaped:
            logger.info("sandbox: removed {} orphaned container(s): {}", len(reaped), reaped)
        state = await asyncio.to_thread(image_state, self._client, self.recipe)
        if state == "present":
            self._phase = "up"
        elif self.settings.build_on_start:
            self._start_build(self._client)
        else:
            self._down(f"the image {self.recipe.image} is {state}: run `beamclaw sandbox build`")

    def _start_build(self, client: docker.DockerClient) -> None:
        self._phase = "building"
        self._build_started = time.monotonic()
        self._build = asyncio.get_running_loop().create_task(self._run_build(client))

    async def _run_build(self, client: docker.DockerClient) -> None:
        def note(line: str) -> None:
            self._progress = line

        try:
            await ensure_image(
                client, self.recipe, method=self.settings.build_method, progress=note
            )
        except ImageBuildError as e:
            self._down(f"{e} (retry with `beamclaw sandbox build`)")
            return
        self._phase = "up"

    async def stop(self) -> None:
        """Cancel a build in progress; remove every container of this pool; close the
        engine connection."""
        if self._build is not None and not self._build.done():
            self._build.cancel()
            await asyncio.gather(self._build, return_exceptions=True)
        if self._pool is not None:
            await self._pool.release_all()
        if self.bridge is not None:
            await self.bridge.stop()
        if self._client is not None:
            self._client.close()

    # ---------------------------------------------------------------- runs

    def scope_key(self, session_id: str, agent_id: str) -> str:
        """The container key of a caller under ``[sandbox] scope``."""
        if self.settings.scope == "session":
            return f"session:{session_id}"
        if self.settings.scope == "agent":
            return f"agent:{agent_id}"
        return "shared"

    async def _ready(self) -> ContainerPool:
        if self._build is not None and not self._build.done():
            try:
                await asyncio.wait_for(asyncio.shield(self._build), BUILD_WAIT_SECONDS)
            except TimeoutError as e:
                raise SandboxUnavailableError(
                    f"the image is still building after {BUILD_WAIT_SECONDS:g} s"
                ) from e
        if self._pool is None or self._phase != "up":
            raise SandboxUnavailableError(self._reason or f"the sandbox is {self._phase}")
        return self._pool

    async def run(
        self,
        key: str,
        script: str,
        language: Language,
        timeout_seconds: float,
        session: SessionRef | None = None,
    ) -> RunOutcome:
        """Run ``script`` in ``key``'s container (waiting for a build in progress).

        Raises:
            SandboxUnavailableError: the engine or the image is not there.
            ContainerError: the container could not be created.
        """
        pool = await self._ready()
        assert self._client is not None
        container_id = await pool.acquire(key)
        tokenizer = None
        if self.pii is not None and session is not None:
            tokenizer = self.pii.for_session(session.session_id)
            script = tokenizer.tokenize(script, known=True)
        token: str | None = None
        environment: dict[str, str] = {}
        if self.bridge is not None and session is not None:
            self.bridge.refresh()
            token = self.bridge.open_run(session)
            environment["BEAMCLAW_BRIDGE_TOKEN"] = token
        try:
            outcome = await asyncio.to_thread(
                run_script,
                self._client,
                container_id,
                script.encode(),
                language,
                timeout_seconds,
                self.settings.max_output_chars,
                environment,
            )
        finally:
            if token is not None and self.bridge is not None:
                self.bridge.close_run(token)
        if outcome.leftovers:
            await pool.release(key, "timeout")
        if tokenizer is not None:
            outcome = replace(
                outcome,
                stdout=tokenizer.detokenize(outcome.stdout, only_known=True),
                stderr=tokenizer.detokenize(outcome.stderr, only_known=True),
            )
        return outcome

    async def end_session(self, session_id: str) -> bool:
        """A session ended: forget its PII tokens; remove its container (scope
        ``session`` only)."""
        if self.pii is not None:
            self.pii.forget(session_id)
        if self._pool is None or self.settings.scope != "session":
            return False
        return await self._pool.release(f"session:{session_id}", "session_end")

    async def containers(self) -> list[ContainerInfo]:
        """This home's containers as Docker lists them."""
        if self._pool is None:
            return []
        return await asyncio.to_thread(self._pool.list)

    @property
    def pool(self) -> ContainerPool | None:
        return self._pool
