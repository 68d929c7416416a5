"""The package graph is enforced: declared deps match imports, import-linter contracts, deptry.

The contract must also *bite*: an upward import added to a temporary copy of the sources
fails ``lint-imports``.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
LAYERS = ["obs", "memory", "tools", "sandbox", "mcp", "core", "scheduler", "gateway", "cli"]


def _pyproject(name: str) -> dict[str, object]:
    with (ROOT / "packages" / f"beamclaw-{name}" / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)


def _check_deps() -> ModuleType:
    spec = importlib.util.spec_from_file_location("check_deps", ROOT / "scripts" / "check_deps.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.mark.parametrize("name", LAYERS)
def test_each_package_declares_exactly_the_siblings_it_imports(name: str) -> None:
    package = ROOT / "packages" / f"beamclaw-{name}"
    assert _check_deps().sibling_problems(package) == []
    src = package / "src" / f"beamclaw_{name}"
    assert (src / "py.typed").exists()
    assert (package / "tests").is_dir()


def test_the_graph_is_a_dag_of_needs_not_a_ladder() -> None:
    """DESIGN.md section 1: installing beamclaw-mcp must not pull numpy or SQLAlchemy."""
    declared = {
        name: _check_deps().declared_siblings(ROOT / "packages" / f"beamclaw-{name}")[0]
        for name in LAYERS
    }

    def closure(name: str) -> set[str]:
        needs = {d.removeprefix("beamclaw-") for d in declared[name]}
        for n in set(needs):
            needs |= closure(n)
        return needs

    assert "memory" not in closure("mcp")
    assert closure("tools") == {"obs"}
    assert closure("sandbox") == {"obs", "tools"}  # the exec tool is a beamclaw_tools Tool
    assert "gateway" not in closure("scheduler"), "the scheduler sits below the gateway"


def test_a_missing_or_an_extra_sibling_fails_the_check(tmp_path: Path) -> None:
    check_deps = _check_deps()
    package = tmp_path / "beamclaw-mcp"
    shutil.copytree(
        ROOT / "packages" / "beamclaw-mcp",
        package,
        ignore=shutil.ignore_patterns("__pycache__", "tests"),
    )
    pyproject = package / "pyproject.toml"
    pyproject.write_text(
        pyproject.read_text().replace(
            '"beamclaw-obs>=0.1,<0.2",', '"beamclaw-obs>=0.1,<0.2",\n    "beamclaw-memory>=0.1",'
        )
    )
    assert check_deps.sibling_problems(package) == [
        "declares beamclaw-memory but never imports it",
        "[tool.uv.sources] names ['beamclaw-obs', 'beamclaw-tools'], dependencies name "
        "['beamclaw-memory', 'beamclaw-obs', 'beamclaw-tools']",
    ]
    (package / "src" / "beamclaw_mcp" / "late.py").write_text(
        "def f() -> None:\n    from beamclaw_core.api import Core  # noqa\n"
    )
    assert "imports beamclaw_core but does not declare beamclaw-core" in (
        check_deps.sibling_problems(package)
    )


def test_import_contracts_hold() -> None:
    r = subprocess.run(
        [str(BIN / "lint-imports")], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout


def test_the_machine_is_pure_without_an_indirect_import_allowance() -> None:
    """The purity contract checks what the machine reaches through its imports too: it
    imports only leaf value modules (messages, kinds, beamclaw_tools.types)."""
    with (ROOT / "pyproject.toml").open("rb") as fh:
        contracts = tomllib.load(fh)["tool"]["importlinter"]["contracts"]
    (pure,) = [c for c in contracts if c["name"].startswith("The loop machine is pure")]
    assert not pure.get("allow_indirect_imports", False)


def test_upward_import_breaks_the_contract(tmp_path: Path) -> None:
    paths: list[str] = []
    for name in LAYERS:
        src = ROOT / "packages" / f"beamclaw-{name}" / "src"
        dst = tmp_path / name
        shutil.copytree(src, dst, ignore=shutil.ignore_patterns("__pycache__"))
        paths.append(str(dst))
    victim = tmp_path / "obs" / "beamclaw_obs" / "health.py"
    victim.write_text(victim.read_text() + "\nimport beamclaw_gateway  # upward!\n")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(paths)}
    r = subprocess.run(
        [str(BIN / "lint-imports"), "--config", str(tmp_path / "pyproject.toml"), "--no-cache"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=False,
    )
    assert r.returncode != 0, r.stdout
    assert "BROKEN" in r.stdout
    assert "beamclaw_obs.health -> beamclaw_gateway" in r.stdout


def test_every_package_imports_only_what_it_declares() -> None:
    r = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "check_deps.py")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stdout + r.stderr


@pytest.mark.parametrize("name", LAYERS)
def test_public_api_is_curated(name: str) -> None:
    import importlib

    module = importlib.import_module(f"beamclaw_{name}")
    exported = list(module.__all__)

    def isort_key(n: str) -> tuple[int, str]:  # ruff RUF022 order: CONSTANTS, Classes, rest
        return (0 if n.isupper() else 1 if n[:1].isupper() else 2, n)

    assert exported == sorted(exported, key=isort_key), f"beamclaw_{name}.__all__ is not sorted"
    for attr in exported:
        assert hasattr(module, attr), f"beamclaw_{name}.{attr} missing"
    project = _pyproject(name)["project"]
    assert isinstance(project, dict)
    assert module.__version__ == project["version"]


_TREE_ROOTS = {
    "obs": "BeamclawObsError",
    "memory": "BeamclawMemoryError",
    "tools": "BeamclawToolsError",
    "sandbox": "BeamclawSandboxError",
    "mcp": "BeamclawMCPError",
    "core": "BeamclawCoreError",
    "scheduler": "BeamclawSchedulerError",
    "gateway": "BeamclawGatewayError",
    "cli": "BeamclawCliError",
}


@pytest.mark.parametrize("name", LAYERS)
def test_every_exception_joins_its_packages_error_tree(name: str) -> None:
    """Each exception class a package defines descends from that package's one root error.

    Module-private signals (``_Name``) never leave their module and are exempt.
    """
    import importlib
    import inspect
    import pkgutil

    package = importlib.import_module(f"beamclaw_{name}")
    root = getattr(package, _TREE_ROOTS[name])
    strays: list[str] = []
    for info in pkgutil.walk_packages(package.__path__, f"beamclaw_{name}."):
        if ".migrations" in info.name or info.name.endswith("__main__"):
            continue
        module = importlib.import_module(info.name)
        for _, cls in inspect.getmembers(module, inspect.isclass):
            private = cls.__name__.startswith("_")
            mine = cls.__module__ == info.name and not private
            if mine and issubclass(cls, BaseException) and not issubclass(cls, root):
                strays.append(f"{info.name}.{cls.__qualname__}")
    assert strays == [], f"outside the beamclaw_{name} error tree: {strays}"


def _lazy_maps() -> list[tuple[Path, set[str], set[str]]]:
    """(``__init__.py``, names imported under TYPE_CHECKING, names in its lazy map) of every
    package module that uses ``lazy_exports``."""
    import ast

    found: list[tuple[Path, set[str], set[str]]] = []
    for init in sorted(ROOT.glob("packages/*/src/*/**/__init__.py")):
        if "lazy_exports(" not in init.read_text():
            continue
        typed: set[str] = set()
        mapped: set[str] = set()
        for node in _check_deps().parse_python(init).body:
            if not (isinstance(node, ast.If) and getattr(node.test, "id", None) == "TYPE_CHECKING"):
                continue
            for stmt in node.body:
                if isinstance(stmt, ast.ImportFrom):
                    typed |= {a.asname or a.name for a in stmt.names}
            for stmt in node.orelse:
                for sub in ast.walk(stmt):
                    if isinstance(sub, ast.Tuple):
                        mapped |= {
                            e.value
                            for e in sub.elts
                            if isinstance(e, ast.Constant) and isinstance(e.value, str)
                        }
        found.append((init, typed, mapped))
    return found


def test_lazy_exports_match_their_typed_imports() -> None:
    """A name pyright sees under TYPE_CHECKING must be in the lazy map (else it type-checks
    but fails on first use), and the map names nothing the typed imports do not."""
    maps = _lazy_maps()
    assert maps, "no package uses lazy_exports"
    for init, typed, mapped in maps:
        assert typed == mapped, (init, sorted(typed - mapped), sorted(mapped - typed))


#: Modules that may tell terminal events apart: the one fold, and the loop's telemetry.
_FOLD_MODULES = {
    "packages/beamclaw-core/src/beamclaw_core/sessions/fold.py",
    "packages/beamclaw-core/src/beamclaw_core/loop/observe.py",
}


def test_only_the_one_fold_maps_a_turns_end_to_a_result() -> None:
    """Front ends read a turn's outcome from ``TurnFold``/``result_of`` (issue 19): a
    second mapping of terminal events (the five folds there were) does not come back."""
    import re

    pattern = re.compile(r"isinstance\(\w+, \(?(TurnDone|TurnError|Cancelled|Dropped)\b")
    found = [
        str(path.relative_to(ROOT))
        for path in sorted(ROOT.glob("packages/*/src/**/*.py"))
        if pattern.search(path.read_text()) and str(path.relative_to(ROOT)) not in _FOLD_MODULES
    ]
    assert found == []


#: The front-end abstractions the Conversation port replaced (issue 19), and where each lived.
_REPLACED = ("ChatBackend", "ConversationBackend", "TurnRunner", "GatewayConversationBackend")


def test_front_ends_share_one_conversation_port() -> None:
    """Every front end reaches conversations through ``beamclaw_core.conversation``:
    the four abstractions it replaced stay deleted, and no front end sends a turn
    through ``Core.send`` behind the port's back."""
    import re

    defined = re.compile(r"^class (" + "|".join(_REPLACED) + r")\b", re.MULTILINE)
    direct_send = re.compile(r"\bcore(\(\))?\.send\(")
    front_ends = [
        *ROOT.glob("packages/beamclaw-gateway/src/**/*.py"),
        *ROOT.glob("packages/beamclaw-cli/src/**/*.py"),
    ]
    assert [
        str(p.relative_to(ROOT))
        for p in sorted(ROOT.glob("packages/*/src/**/*.py"))
        if defined.search(p.read_text())
    ] == []
    assert [str(p.relative_to(ROOT)) for p in front_ends if direct_send.search(p.read_text())] == []
