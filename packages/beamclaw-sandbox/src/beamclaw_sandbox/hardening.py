"""The container a sandbox runs in, as data: every hardening flag in one place (no I/O).

Invariants (DESIGN.md section 7), whatever the settings:

* non-root (``nobody``), every capability dropped, ``no-new-privileges``;
* read-only root; writable only ``/tmp`` (tmpfs, ``noexec``) and ``/work`` (tmpfs, where
  programs may run: native extensions need it), both
  ``nosuid,nodev`` and size-capped;
* memory (no extra swap), CPU and PID limits; an init process reaps orphans;
* no network unless ``[sandbox] network`` names one (``host`` is refused); the only bind
  mounts are the tool bridge's two read-only directories, so no Docker socket;
* the environment is the image's plus the allowlist: nothing else of the host's.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from beamclaw_sandbox.recipe import SANDBOX_UID, WORKDIR
from beamclaw_sandbox.settings import SandboxSettings

SANDBOX_LABEL = "org.beamclaw.sandbox"
"""Label every sandbox container carries (value ``1``)."""
OWNER_LABEL = "org.beamclaw.sandbox.owner"
"""Which BeamClaw home made the container: the reaper removes only its own orphans."""
SCOPE_LABEL = "org.beamclaw.sandbox.scope"
KEY_LABEL = "org.beamclaw.sandbox.key"

REFUSED_NETWORKS = ("host",)
CONTAINER_TMP = "/tmp"  # noqa: S108 - the container's own /tmp: a private, noexec tmpfs


def owner_id(home: str) -> str:
    """A short stable id for a BeamClaw home directory (the owner label's value)."""
    return hashlib.sha256(home.encode()).hexdigest()[:12]


def container_name(owner: str, key: str) -> str:
    """``beamclaw-sbx-<owner>-<hash of key>``: unique per owner and scope key."""
    return f"beamclaw-sbx-{owner}-{hashlib.sha256(key.encode()).hexdigest()[:12]}"


def container_environment(settings: SandboxSettings, host: Mapping[str, str]) -> dict[str, str]:
    """``env_allow`` names present in ``host`` plus the fixed ``env`` values."""
    out = {name: host[name] for name in settings.env_allow if name in host}
    out.update(settings.env)
    return out


@dataclass(frozen=True)
class ContainerSpec:
    """Arguments of ``client.containers.create`` for one sandbox container."""

    image: str
    name: str
    labels: Mapping[str, str]
    environment: Mapping[str, str]
    settings: SandboxSettings
    binds: Mapping[str, str] = field(default_factory=dict[str, str])
    """Host directory → container path, mounted read-only (the tool bridge's socket and
    ``/tools``; never the Docker socket)."""

    def network_kwargs(self) -> dict[str, Any]:
        network = self.settings.network
        if network in REFUSED_NETWORKS or network.startswith("container:"):
            raise ValueError(f"[sandbox] network = {network!r} would share the host's network")
        if network in ("none", "bridge"):
            return {"network_mode": network}
        return {"network": network}

    def create_kwargs(self) -> dict[str, Any]:
        s = self.settings
        uid = f"{SANDBOX_UID}:{SANDBOX_UID}"
        memory = f"{s.memory_mb}m"
        return {
            "image": self.image,
            "command": ["sleep", "infinity"],
            "name": self.name,
            "labels": dict(self.labels),
            "environment": dict(self.environment),
            "user": uid,
            "working_dir": WORKDIR,
            "hostname": "sandbox",
            "cap_drop": ["ALL"],
            "security_opt": ["no-new-privileges:true"],
            "read_only": True,
            "tmpfs": {
                CONTAINER_TMP: f"rw,noexec,nosuid,nodev,size={s.tmp_size_mb}m",
                WORKDIR: (
                    f"rw,exec,nosuid,nodev,size={s.work_size_mb}m,"
                    f"uid={SANDBOX_UID},gid={SANDBOX_UID},mode=0700"
                ),
            },
            "mem_limit": memory,
            "memswap_limit": memory,
            "nano_cpus": int(s.cpus * 1_000_000_000),
            "pids_limit": s.pids_limit,
            "init": True,
            "ipc_mode": "private",
            "volumes": {host: {"bind": path, "mode": "ro"} for host, path in self.binds.items()},
            "detach": True,
            "stdin_open": False,
            "tty": False,
            **self.network_kwargs(),
        }
