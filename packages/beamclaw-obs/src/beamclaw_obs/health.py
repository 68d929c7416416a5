"""Component health: what ``/health`` reports and ``/ready`` decides on.

Components (database, MCP servers, channels, scheduler …) register a probe returning a
:class:`ComponentHealth`. Probes must be cheap and must not raise; one that raises is
reported as ``down`` with the error.
"""

from __future__ import annotations

import enum
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


class HealthState(enum.StrEnum):
    UP = "up"
    DEGRADED = "degraded"
    DOWN = "down"
    STARTING = "starting"
    BUILDING = "building"
    """Preparing something long before it can serve (the sandbox's image); counts as
    ``starting`` in the overall status."""
    DISABLED = "disabled"


@dataclass(frozen=True)
class ComponentHealth:
    state: HealthState
    detail: str = ""
    data: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {"status": self.state.value}
        if self.detail:
            out["detail"] = self.detail
        out.update(self.data)
        return out


Probe = Callable[[], ComponentHealth]


class HealthRegistry:
    """Named health probes. ``critical`` components gate readiness."""

    def __init__(self) -> None:
        self._probes: dict[str, tuple[Probe, bool]] = {}

    def register(self, name: str, probe: Probe, *, critical: bool = False) -> None:
        self._probes[name] = (probe, critical)

    def unregister(self, name: str) -> None:
        self._probes.pop(name, None)

    def snapshot(self) -> dict[str, ComponentHealth]:
        out: dict[str, ComponentHealth] = {}
        for name, (probe, _critical) in sorted(self._probes.items()):
            try:
                out[name] = probe()
            except Exception as exc:
                out[name] = ComponentHealth(HealthState.DOWN, f"probe failed: {exc}")
        return out

    def ready(self) -> bool:
        """True when every critical component is up (or degraded)."""
        snap = self.snapshot()
        return all(
            snap[name].state in (HealthState.UP, HealthState.DEGRADED)
            for name, (_p, critical) in self._probes.items()
            if critical
        )

    def overall(self) -> HealthState:
        states = {h.state for h in self.snapshot().values()}
        if HealthState.DOWN in states:
            return HealthState.DEGRADED
        if states & {HealthState.STARTING, HealthState.BUILDING}:
            return HealthState.STARTING
        return HealthState.UP
