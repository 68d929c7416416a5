"""The executor's dependencies are a handful of named ports, not a bag (issue 18)."""

from __future__ import annotations

import dataclasses
import inspect
import typing

from beamclaw_core.loop import ports
from beamclaw_core.loop.executor import TurnExecutor
from beamclaw_core.loop.ports import LoopDeps


def test_loop_deps_holds_only_ports() -> None:
    fields = dataclasses.fields(LoopDeps)
    assert 4 <= len(fields) <= 7
    hints = typing.get_type_hints(LoopDeps)
    for f in fields:
        port = hints[f.name]
        assert inspect.isclass(port), f"{f.name}: {port!r} is not a port"
        assert getattr(port, "_is_protocol", False), f"{f.name}: {port.__name__} is no Protocol"
        assert port.__module__ == ports.__name__, f"{f.name}: {port.__name__} lives elsewhere"
        assert f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    assert LoopDeps.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_the_executor_is_built_from_context_state_and_ports_only() -> None:
    params = list(inspect.signature(TurnExecutor.__init__).parameters)
    assert params == ["self", "ctx", "state", "deps"]
