"""The machine modules import nothing that does I/O, reads a clock, draws randomness or
logs (DESIGN.md §3; STYLE anti-patterns). Checked on the source, transitively within the
loop's pure modules."""

from __future__ import annotations

import ast
from pathlib import Path

import beamclaw_core.loop as loop_pkg

PURE_MODULES = (
    "machine",
    "steps",
    "states",
    "inputs",
    "effects",
    "context",
    "turn_events",
    "history",
    "errors",
)
FORBIDDEN = {
    "asyncio",
    "time",
    "datetime",
    "random",
    "secrets",
    "uuid",
    "logging",
    "loguru",
    "os",
    "socket",
    "httpx",
    "sqlalchemy",
    "threading",
    "subprocess",
    "pathlib",
    "beamclaw_obs",
    "beamclaw_memory",
}
ALLOWED_INTERNAL = {f"beamclaw_core.loop.{m}" for m in PURE_MODULES} | {
    "beamclaw_core.messages",
    "beamclaw_core.kinds",
    "beamclaw_core.errors",
    "beamclaw_core.attachments",  # pure too: the import-linter contract follows it
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text())
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            names.add(node.module)
    return names


def test_machine_modules_are_pure() -> None:
    root = Path(loop_pkg.__file__).parent
    for name in PURE_MODULES:
        for imported in _imports(root / f"{name}.py"):
            top = imported.split(".")[0]
            assert top not in FORBIDDEN, f"loop/{name}.py imports {imported}"
            if top == "beamclaw_core":
                assert imported in ALLOWED_INTERNAL, f"loop/{name}.py imports {imported}"
            if top == "beamclaw_tools":  # its value types only, not the package's I/O
                assert imported == "beamclaw_tools.types", f"loop/{name}.py imports {imported}"


def test_table_covers_every_state() -> None:
    from beamclaw_core.loop import TABLE
    from beamclaw_core.loop.inputs import Interrupted
    from beamclaw_core.loop.states import STATE_TYPES

    for state_type in STATE_TYPES:
        assert (state_type, Interrupted) in TABLE
