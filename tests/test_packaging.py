"""Every package builds on its own, and a lower package installs and imports alone."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ["obs", "memory", "tools", "sandbox", "mcp", "core", "scheduler", "gateway", "cli"]
UV = shutil.which("uv") or str(Path(sys.executable).parent / "uv")


@pytest.fixture(scope="module")
def wheels(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    out = tmp_path_factory.mktemp("dist")
    built: dict[str, Path] = {}
    for name in LAYERS:
        r = subprocess.run(
            [
                UV,
                "build",
                "--quiet",
                "--wheel",
                "--package",
                f"beamclaw-{name}",
                "--out-dir",
                str(out),
            ],
            cwd=ROOT,
            capture_output=True,
            text=True,
            check=False,
        )
        assert r.returncode == 0, r.stderr
        (wheel,) = out.glob(f"beamclaw_{name}-*.whl")
        built[name] = wheel
    return built


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


@pytest.mark.slow
def test_lowest_package_installs_and_imports_alone(wheels: dict[str, Path], tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([UV, "venv", "--quiet", "--python", sys.executable, str(venv)], check=True)
    py = venv / "bin" / "python"
    r = subprocess.run(
        [UV, "pip", "install", "--quiet", "--python", str(py), str(wheels["obs"])],
        capture_output=True,
        text=True,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    probe = (
        "import beamclaw_obs, json, sys; beamclaw_obs.emit(beamclaw_obs.EventType.GATEWAY_STOP); "
        "print(beamclaw_obs.__version__); "
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules "
        "if m.startswith('beamclaw_')})))"
    )
    out = subprocess.run([str(py), "-c", probe], capture_output=True, text=True, check=True).stdout
    version, packages = out.splitlines()
    assert version == "0.1.0"
    assert json.loads(packages) == ["beamclaw_obs"]
