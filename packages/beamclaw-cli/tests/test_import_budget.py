"""The entry point's import budget: commands that do not serve never load the heavy stacks.

Each case runs the real ``beamclaw_cli.app.main`` in a fresh interpreter and lists which of
the heavy third-party packages ended up in ``sys.modules``. The budget is a set of module
names, never a time: vectors and search (numpy, bm25s), the database (SQLAlchemy,
Alembic), the MCP SDK, the web stack (FastAPI, Starlette, uvicorn), the provider HTTP
client (aiohttp) and the TUI (textual) load only for the commands that use them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = (
    "aiohttp",
    "alembic",
    "bm25s",
    "docker",
    "fastapi",
    "mcp",
    "numpy",
    "sqlalchemy",
    "starlette",
    "textual",
    "uvicorn",
)

_DRIVER = """
import contextlib, io, json, sys
import beamclaw_cli.app
argv = json.loads(sys.argv[1])
if argv is not None:
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        sys.modules["beamclaw_cli.app"].main(argv)
heavy = json.loads(sys.argv[2])
print(json.dumps(sorted(m for m in heavy if m in sys.modules)))
"""


def loaded_heavy(argv: list[str] | None, home: Path, modules: tuple[str, ...] = HEAVY) -> list[str]:
    """Heavy packages in ``sys.modules`` after importing the CLI (and running ``argv``)."""
    env = {**os.environ, "BEAMCLAW_HOME": str(home), "BEAMCLAW_PORT": "9"}
    r = subprocess.run(
        [sys.executable, "-c", _DRIVER, json.dumps(argv), json.dumps(modules)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


@pytest.mark.parametrize(
    "argv",
    [
        None,
        ["--help"],
        ["version"],
        ["status"],
        ["agent", "list"],
        ["config", "show"],
        ["mcp", "list", "--local"],
        ["ui"],
        ["sandbox", "--help"],
        ["tasks"],
    ],
    ids=lambda a: "import" if a is None else " ".join(a),
)
def test_non_serving_commands_stay_light(argv: list[str] | None, beamclaw_home: Path) -> None:
    assert loaded_heavy(argv, beamclaw_home) == []


@pytest.mark.parametrize(
    "argv",
    [None, ["--help"], ["version"], ["status"], ["agent", "list"], ["config", "show"], ["ui"]],
    ids=lambda a: "import" if a is None else " ".join(a),
)
def test_light_commands_skip_the_http_client(argv: list[str] | None, beamclaw_home: Path) -> None:
    """httpx (and the rich console its CLI helper drags in) is for commands that call the
    gateway's API; ``status`` asks ``/health`` through the standard library."""
    assert loaded_heavy(argv, beamclaw_home, ("httpx", "rich")) == []


LIGHT_CONFIG = (
    "asyncio",
    "beamclaw_core.settings",
    "beamclaw_gateway.config",
    "limits",
    "loguru",
    "pydantic_settings",
)
"""What reading two keys must not cost: the whole configuration (every package's section,
pydantic-settings, the rate-limit library for the default rates, the logger for unknown
keys) and the event loop (commands that run one ``asyncio.run`` import it then)."""


@pytest.mark.parametrize(
    "argv",
    [None, ["--help"], ["version"], ["status"], ["agent", "list"]],
    ids=lambda a: "import" if a is None else " ".join(a),
)
def test_light_commands_read_only_their_keys(argv: list[str] | None, beamclaw_home: Path) -> None:
    """``status`` reads ``[gateway.http]`` and ``agent list`` ``[core] default_agent``
    alone (``read_section``)."""
    assert loaded_heavy(argv, beamclaw_home, LIGHT_CONFIG) == []


def test_help_skips_pydantic_and_package_metadata(beamclaw_home: Path) -> None:
    """typer builds pydantic adapters only for a command's parameters; ``version`` reads
    the installed distributions' metadata when it runs, not when the CLI is built."""
    assert loaded_heavy(["--help"], beamclaw_home, ("importlib.metadata", "pydantic")) == []


@pytest.mark.parametrize("argv", [["status"], ["agent", "list"]], ids=" ".join)
def test_the_light_keys_need_no_pydantic(argv: list[str], beamclaw_home: Path) -> None:
    """Building even one section's model class costs more than the rest of ``status`` or
    ``agent list``: they read their scalar keys from the raw table and check them by hand."""
    assert loaded_heavy(argv, beamclaw_home, ("pydantic",)) == []


def test_version_skips_pydantic(beamclaw_home: Path) -> None:
    """typer 0.29 imports pydantic and builds a TypeAdapter per parameter of the command
    it runs (0.1-0.3 s on every command); the CLI pins typer below it, and ``version``
    needs no model of its own."""
    assert loaded_heavy(["version"], beamclaw_home, ("pydantic",)) == []


def test_the_budget_can_fail(beamclaw_home: Path) -> None:
    """The probe sees a heavy import when a command truly needs one (the database)."""
    assert "sqlalchemy" in loaded_heavy(["sessions", "list"], beamclaw_home)
    assert "pydantic_settings" in loaded_heavy(["config", "show"], beamclaw_home, LIGHT_CONFIG)
    assert "docker" in loaded_heavy(["sandbox", "status"], beamclaw_home)
