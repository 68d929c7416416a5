"""``beamclaw version``: versions of every BeamClaw package."""

from __future__ import annotations

import json
import platform

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
    from importlib.metadata import PackageNotFoundError, version  # ~20 ms: not for --help

    out: dict[str, str] = {}
    for name in PACKAGES:
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


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
