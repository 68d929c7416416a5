"""``beamclaw version``: versions of every BeamClaw package."""

from __future__ import annotations

import json
import os
import platform
import sys

import typer

PACKAGES = (
    "beamclaw-obs",
    "beamclaw-memory",
    "beamclaw-tools",
    "beamclaw-sandbox",
    "beamclaw-mcp",
    "beamclaw-core",
    "beamclaw-scheduler",
    "beamclaw-gateway",
    "beamclaw-cli",
)


def package_versions() -> dict[str, str]:
    """Each package's installed version, ``"not installed"`` for one that is not.

    Read from the name of its ``.dist-info`` directory, first on ``sys.path`` (the wheel
    spec names it ``{name}-{version}.dist-info``, and ``importlib.metadata`` finds the same
    one): importing ``importlib.metadata`` and parsing nine METADATA files with its email
    parser costs ≈ 50 ms, a sixth of the CLI's budget. A package installed some other way
    (an ``.egg-info``) is asked of ``importlib.metadata``.
    """
    found = _dist_info_versions()
    missing = [name for name in PACKAGES if name not in found]
    if missing:
        from importlib.metadata import PackageNotFoundError, version

        for name in missing:
            try:
                found[name] = version(name)
            except PackageNotFoundError:
                found[name] = "not installed"
    return {name: found[name] for name in PACKAGES}


def _dist_info_versions() -> dict[str, str]:
    """``{package: version}`` of the ``beamclaw_*.dist-info`` directories on ``sys.path``,
    the first of each name winning (as imports do)."""
    found: dict[str, str] = {}
    for entry in sys.path:
        try:
            names = os.listdir(entry or ".")
        except OSError:  # a zip, a missing directory
            continue
        for dir_name in names:
            if not (dir_name.startswith("beamclaw_") and dir_name.endswith(".dist-info")):
                continue
            dist, _, ver = dir_name.removesuffix(".dist-info").partition("-")
            if ver:
                found.setdefault(dist.replace("_", "-"), ver)
    return found


def register(app: typer.Typer) -> None:
    @app.command("version")
    def version_command(
        as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        """Print the version of BeamClaw and each of its packages."""
        versions = package_versions()
        if as_json:
            print(json.dumps({"python": platform.python_version(), "packages": versions}))
            return
        print(f"beamclaw {versions['beamclaw-cli']} (Python {platform.python_version()})")
        for name, ver in versions.items():
            print(f"  {name:<20} {ver}")
