"""Every package builds on its own, and each wheel installs and imports alone.

For each of the nine packages a fresh venv gets its wheel plus only the wheels of the
siblings its wheel metadata requires (transitively), third-party dependencies from the
index; then the package and every public submodule import there, and no other sibling
is loaded. The venvs are built in parallel (uv's cache makes each install a few links).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import zipfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["obs", "memory", "tools", "sandbox", "mcp", "core", "scheduler", "gateway", "cli"]
UV = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
_REQUIRES_SIBLING = re.compile(r"^Requires-Dist: beamclaw-([a-z]+)", re.MULTILINE)

PROBE = """
import importlib, json, pkgutil, sys
name = sys.argv[1]
package = importlib.import_module(name)
modules = [name]
def fail(module):
    raise ImportError(module)
for info in pkgutil.walk_packages(package.__path__, name + ".", onerror=fail):
    parts = info.name.split(".")
    # __main__ runs the program; a migration environment runs only inside Alembic
    if any(p.startswith("_") for p in parts) or parts[-2:] == ["migrations", "env"]:
        continue
    importlib.import_module(info.name)
    modules.append(info.name)
loaded = sorted({m.split(".")[0] for m in sys.modules if m.startswith("beamclaw_")})
print(json.dumps({"version": package.__version__, "modules": modules, "loaded": loaded}))
"""


@dataclass(frozen=True)
class Installed:
    """One package's own venv: what it holds and what importing the package did."""

    siblings: frozenset[str]
    distributions: frozenset[str]
    version: str
    modules: tuple[str, ...]
    loaded: tuple[str, ...]


def _run(args: list[str], cwd: Path | None = None) -> str:
    r = subprocess.run(args, cwd=cwd, capture_output=True, text=True, check=False)
    assert r.returncode == 0, f"{' '.join(args)}\n{r.stdout}\n{r.stderr}"
    return r.stdout


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    _run([UV, "build", "--quiet", "--wheel", "--all-packages", "--out-dir", str(out)], ROOT)
    built: dict[str, Path] = {}
    for name in LAYERS:
        (wheel,) = out.glob(f"beamclaw_{name}-*.whl")
        built[name] = wheel
    return built


def _required_siblings(wheel: Path) -> set[str]:
    with zipfile.ZipFile(wheel) as zf:
        metadata = next(n for n in zf.namelist() if n.endswith(".dist-info/METADATA"))
        return set(_REQUIRES_SIBLING.findall(zf.read(metadata).decode()))


def _closure(name: str, wheels: dict[str, Path]) -> set[str]:
    needs = _required_siblings(wheels[name])
    for sibling in set(needs):
        needs |= _closure(sibling, wheels)
    return needs


def _install_alone(name: str, wheels: dict[str, Path], root: Path) -> Installed:
    siblings = _closure(name, wheels)
    venv = root / name
    _run([UV, "venv", "--quiet", "--python", sys.executable, str(venv)])
    py = str(venv / "bin" / "python")
    chosen = [str(wheels[n]) for n in sorted({name, *siblings})]
    _run([UV, "pip", "install", "--quiet", "--python", py, *chosen])
    freeze = _run([UV, "pip", "freeze", "--python", py])
    distributions = {
        re.split(r"[=@ ]", line, maxsplit=1)[0].lower().replace("_", "-")
        for line in freeze.splitlines()
        if line.strip()
    }
    probe = json.loads(_run([py, "-c", PROBE, f"beamclaw_{name}"], root).splitlines()[-1])
    return Installed(
        siblings=frozenset(siblings),
        distributions=frozenset(distributions),
        version=probe["version"],
        modules=tuple(probe["modules"]),
        loaded=tuple(probe["loaded"]),
    )


@pytest.fixture(scope="module")
def installed(
    wheels: dict[str, Path], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Installed]:
    root = tmp_path_factory.mktemp("venvs")
    with ThreadPoolExecutor(max_workers=3) as pool:
        futures = {name: pool.submit(_install_alone, name, wheels, root) for name in LAYERS}
        return {name: future.result() for name, future in futures.items()}


@pytest.mark.slow
def test_wheels_carry_their_data(wheels: dict[str, Path]) -> None:
    memory = zipfile.ZipFile(wheels["memory"]).namelist()
    assert "beamclaw_memory/migrations/env.py" in memory
    assert any(n.startswith("beamclaw_memory/migrations/versions/memory_0001") for n in memory)
    core = zipfile.ZipFile(wheels["core"]).namelist()
    assert "beamclaw_core/workspace/templates/SOUL.md" in core
    assert any(n.startswith("beamclaw_core/migrations/versions/") for n in core)
    entry_points = next(
        zipfile.ZipFile(wheels["core"]).read(n).decode()
        for n in core
        if n.endswith("entry_points.txt")
    )
    assert "[beamclaw.migrations]" in entry_points
    cli = zipfile.ZipFile(wheels["cli"]).namelist()
    ep = next(
        zipfile.ZipFile(wheels["cli"]).read(n).decode()
        for n in cli
        if n.endswith("entry_points.txt")
    )
    assert "beamclaw = beamclaw_cli.app:run" in ep
    gateway = zipfile.ZipFile(wheels["gateway"]).namelist()
    for page_file in ("index.html", "app.js", "markdown.js", "style.css"):  # the web page
        assert f"beamclaw_gateway/ui/static/{page_file}" in gateway


@pytest.mark.slow
@pytest.mark.parametrize("name", LAYERS)
def test_each_package_installs_and_imports_alone(
    name: str, installed: dict[str, Installed]
) -> None:
    result = installed[name]
    assert result.version == "0.1.0"
    assert len(result.modules) > 1, result.modules  # the public submodules were imported
    own = {f"beamclaw-{name}", *(f"beamclaw-{s}" for s in result.siblings)}
    assert {d for d in result.distributions if d.startswith("beamclaw-")} == own
    allowed = {f"beamclaw_{name}", *(f"beamclaw_{s}" for s in result.siblings)}
    assert set(result.loaded) <= allowed


@pytest.mark.slow
def test_lower_packages_stay_light(installed: dict[str, Installed]) -> None:
    """DESIGN.md section 1: installing beamclaw-mcp must not pull numpy or SQLAlchemy."""
    assert installed["obs"].loaded == ("beamclaw_obs",)
    assert installed["mcp"].siblings == {"obs", "tools"}
    for light in ("obs", "tools", "sandbox", "mcp", "scheduler"):
        heavy = {"numpy", "sqlalchemy", "asyncpg", "bm25s"} & installed[light].distributions
        assert not heavy, f"beamclaw-{light} pulls {sorted(heavy)}"
