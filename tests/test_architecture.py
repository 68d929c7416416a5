"""The package graph is enforced: declared deps, import-linter contracts, deptry.

The contract must also *bite*: an upward import added to a temporary copy of the sources
fails ``lint-imports``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
LAYERS = ["obs", "memory", "tools", "sandbox", "mcp", "core", "scheduler", "gateway", "cli"]


def _pyproject(name: str) -> dict[str, object]:
    with (ROOT / "packages" / f"beamclaw-{name}" / "pyproject.toml").open("rb") as fh:
        return tomllib.load(fh)


@pytest.mark.parametrize("index", range(len(LAYERS)))
def test_each_package_declares_exactly_the_siblings_below_it(index: int) -> None:
    name = LAYERS[index]
    data = _pyproject(name)
    project = data["project"]
    assert isinstance(project, dict)
    deps = [str(d) for d in project["dependencies"]]
    siblings = sorted(
        d.split(">")[0].split("=")[0].strip() for d in deps if d.startswith("beamclaw-")
    )
    assert siblings == sorted(f"beamclaw-{n}" for n in LAYERS[:index])
    sources = data.get("tool", {}).get("uv", {}).get("sources", {})  # type: ignore[union-attr]
    assert sorted(sources) == sorted(f"beamclaw-{n}" for n in LAYERS[:index])
    src = ROOT / "packages" / f"beamclaw-{name}" / "src" / f"beamclaw_{name}"
    assert (src / "py.typed").exists()
    assert (ROOT / "packages" / f"beamclaw-{name}" / "tests").is_dir()


def test_import_contracts_hold() -> None:
    r = subprocess.run(
        [str(BIN / "lint-imports")], cwd=ROOT, capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert "0 broken" in r.stdout


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
