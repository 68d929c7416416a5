"""Sandbox containers by scope key: created lazily, reused, removed, reaped.

Invariants:

* at most one container per key: creation is serialised per key, and a container found
  stopped (its init killed by the OOM killer, removed by hand) is replaced;
* every container carries :data:`SANDBOX_LABEL` and this home's :data:`OWNER_LABEL`, so
  :meth:`ContainerPool.reap` removes exactly this home's containers left by a crash, and
  never another BeamClaw's;
* removal is forced (``docker rm -f``) and idempotent;
* a container made emits ``sandbox_start``; one removed or found gone ``sandbox_stop``
  with the reason.

Blocking SDK calls run in worker threads.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from beamclaw_obs import EventType, emit
from beamclaw_sandbox.errors import ContainerError
from beamclaw_sandbox.hardening import (
    KEY_LABEL,
    OWNER_LABEL,
    SANDBOX_LABEL,
    SCOPE_LABEL,
    ContainerSpec,
    container_environment,
    container_name,
)
from beamclaw_sandbox.settings import SandboxSettings

if TYPE_CHECKING:
    import docker
    from docker.models.containers import Container


@dataclass(frozen=True)
class ContainerInfo:
    """One sandbox container as ``beamclaw sandbox list`` shows it."""

    id: str
    name: str
    status: str
    scope: str
    key: str


class ContainerPool:
    """The containers of one BeamClaw home (``owner``)."""

    def __init__(
        self,
        client: docker.DockerClient,
        settings: SandboxSettings,
        owner: str,
        *,
        host_env: Mapping[str, str] | None = None,
        binds: Mapping[str, str] | None = None,
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        self._binds = dict(binds or {})
        self._extra_env = dict(extra_env or {})
        self._client = client
        self._settings = settings
        self._owner = owner
        self._host_env = dict(os.environ if host_env is None else host_env)
        self._ids: dict[str, str] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    @property
    def owner(self) -> str:
        return self._owner

    def spec(self, key: str) -> ContainerSpec:
        """The container a key gets (see :mod:`beamclaw_sandbox.hardening`)."""
        return ContainerSpec(
            image=self._settings.image,
            name=container_name(self._owner, key),
            labels={
                SANDBOX_LABEL: "1",
                OWNER_LABEL: self._owner,
                SCOPE_LABEL: self._settings.scope,
                KEY_LABEL: key,
            },
            environment={
                **container_environment(self._settings, self._host_env),
                **self._extra_env,
            },
            settings=self._settings,
            binds=self._binds,
        )

    async def acquire(self, key: str) -> str:
        """The id of ``key``'s running container, created and started when needed.

        Raises:
            ContainerError: Docker refused to create or start it.
        """
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            known = self._ids.get(key)
            if known is not None and await asyncio.to_thread(self._running, known):
                return known
            if self._ids.pop(key, None) is not None:
                self._stopped(key, "exited")
            container_id = await asyncio.to_thread(self._create, key)
            self._ids[key] = container_id
            emit(
                EventType.SANDBOX_START,
                key=key,
                container=self.spec(key).name,
                scope=self._settings.scope,
                image=self._settings.image,
            )
            return container_id

    def _running(self, container_id: str) -> bool:
        import docker.errors

        try:
            container = self._client.containers.get(container_id)
        except docker.errors.NotFound:
            return False
        if container.status != "running":
            self._remove_quietly(container)
            return False
        return True

    def _create(self, key: str) -> str:
        import docker.errors

        spec = self.spec(key)
        try:
            self._remove_by_name(spec.name)
            container = self._client.containers.run(**spec.create_kwargs())
        except docker.errors.ImageNotFound as e:
            raise ContainerError(key, f"image {spec.image} is missing: {e}") from e
        except docker.errors.DockerException as e:
            raise ContainerError(key, str(e)) from e
        return str(container.id)

    def _remove_by_name(self, name: str) -> None:
        import docker.errors

        try:
            self._remove_quietly(self._client.containers.get(name))
        except docker.errors.NotFound:
            return

    @staticmethod
    def _remove_quietly(container: Container) -> None:
        import docker.errors

        try:
            container.remove(force=True)
        except docker.errors.NotFound:
            return
        except docker.errors.APIError as e:
            if "already in progress" not in str(e):
                raise

    def _stopped(self, key: str, reason: str) -> None:
        emit(EventType.SANDBOX_STOP, key=key, container=self.spec(key).name, reason=reason)

    async def release(self, key: str, reason: str = "released") -> bool:
        """Remove ``key``'s container; True when there was one.

        ``reason`` (``session_end``, ``timeout``, ``stop`` …) goes into ``sandbox_stop``."""
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            container_id = self._ids.pop(key, None)
            self._locks.pop(key, None)
            if container_id is None:
                return False
            await asyncio.to_thread(self._remove_id, container_id)
            self._stopped(key, reason)
            return True

    def _remove_id(self, container_id: str) -> None:
        import docker.errors

        try:
            self._remove_quietly(self._client.containers.get(container_id))
        except docker.errors.NotFound:
            return

    async def release_all(self) -> int:
        """Remove every container this pool made; how many."""
        keys = list(self._ids)
        removed = await asyncio.gather(*(self.release(k, "stop") for k in keys))
        return sum(removed)

    def keys(self) -> list[str]:
        return sorted(self._ids)

    # ---------------------------------------------------------------- by label (blocking)

    def list(self) -> list[ContainerInfo]:
        """Every container of this owner (running or not), as Docker lists them (one
        call: a container removed meanwhile is simply not listed)."""
        rows: list[dict[str, Any]] = self._client.api.containers(
            all=True, filters={"label": [f"{SANDBOX_LABEL}=1", f"{OWNER_LABEL}={self._owner}"]}
        )
        out: list[ContainerInfo] = []
        for row in rows:
            labels: dict[str, str] = row.get("Labels") or {}
            names: list[str] = row.get("Names") or [""]
            out.append(
                ContainerInfo(
                    id=str(row["Id"]),
                    name=names[0].lstrip("/"),
                    status=str(row.get("State", "")),
                    scope=labels.get(SCOPE_LABEL, ""),
                    key=labels.get(KEY_LABEL, ""),
                )
            )
        return out

    def reap(self) -> list[str]:
        """Remove this owner's containers this pool does not know (a crash's orphans)."""
        known = set(self._ids.values())
        gone: list[str] = []
        for info in self.list():
            if info.id in known:
                continue
            self._remove_id(info.id)
            gone.append(info.name)
            emit(EventType.SANDBOX_STOP, key=info.key, container=info.name, reason="orphan")
        return gone
