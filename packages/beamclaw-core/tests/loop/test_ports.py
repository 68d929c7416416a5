"""The executor's dependencies are a handful of named ports, not a bag (issue 18)."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import typing
from pathlib import Path

import beamclaw_core
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


def test_only_the_composition_root_builds_a_runtime_or_loop_deps() -> None:
    root = Path(beamclaw_core.__file__).parent
    builders: dict[str, set[str]] = {"Runtime": set(), "LoopDeps": set()}
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            call = node.func if isinstance(node, ast.Call) else None
            if isinstance(call, ast.Name) and call.id in builders:
                builders[call.id].add(path.relative_to(root).as_posix())
    assert builders == {
        "Runtime": {"sessions/composition.py"},
        "LoopDeps": {"sessions/composition.py"},
    }
