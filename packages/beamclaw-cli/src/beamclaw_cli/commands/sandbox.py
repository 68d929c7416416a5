"""``beamclaw sandbox build|status|list|kill``: the Docker sandbox behind the ``exec`` tool.

``build`` makes the image (offline from Debian packages with debootstrap, or the
packaged Dockerfile over a local base image) and shows its progress; it is skipped when
an image from the same recipe exists (``--force`` rebuilds). ``status`` says whether the
engine answers, whether the image is there and which limits containers get. ``list``
and ``kill`` show and remove this home's containers (a running gateway makes a new one
on its next ``exec``). Docker is reached through :class:`beamclaw_sandbox.SandboxAdmin`,
imported only inside these commands.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from beamclaw_cli.errors import BeamclawCliError, UsageError

if TYPE_CHECKING:
    from beamclaw_sandbox import SandboxAdmin, SandboxSettings

_CONFIG = typer.Option(None, "--config", "-c", help="Config file.", exists=True, dir_okay=False)
_JSON = typer.Option(False, "--json", help="Machine-readable output.")


def _settings(config: Path | None) -> SandboxSettings:
    from beamclaw_gateway import load_config

    settings: SandboxSettings = load_config(config).settings.sandbox
    return settings


def _admin(settings: SandboxSettings) -> SandboxAdmin:
    from beamclaw_obs import beamclaw_home
    from beamclaw_sandbox import DockerUnavailableError, SandboxAdmin

    try:
        return SandboxAdmin.open(settings, beamclaw_home())
    except DockerUnavailableError as e:
        raise BeamclawCliError(str(e)) from e


def limits_line(settings: SandboxSettings) -> str:
    """The hardening a container gets, in one line."""
    return (
        f"non-root, no capabilities, read-only root, no-new-privileges, "
        f"network {settings.network}, {settings.memory_mb} MB, {settings.cpus:g} CPU, "
        f"{settings.pids_limit} processes, /tmp {settings.tmp_size_mb} MB noexec, "
        f"/work {settings.work_size_mb} MB, scope {settings.scope}"
    )


def build_command(
    config: Path | None = _CONFIG,
    force: bool = typer.Option(False, "--force", help="Rebuild even if the image is current."),
    method: str = typer.Option(
        "", "--method", help="auto, debootstrap or dockerfile (default: [sandbox] build_method)."
    ),
) -> None:
    """Build the sandbox image (skipped when current), showing progress."""
    from beamclaw_sandbox import ImageBuildError
    from beamclaw_sandbox.settings import BuildMethod

    settings = _settings(config)
    methods: dict[str, BuildMethod] = {
        "auto": "auto",
        "debootstrap": "debootstrap",
        "dockerfile": "dockerfile",
    }
    if method and method not in methods:
        raise UsageError(f"--method must be one of {', '.join(methods)} (got {method!r})")
    chosen: BuildMethod = methods[method] if method else settings.build_method
    started = time.monotonic()

    def show(line: str) -> None:
        typer.echo(f"[{time.monotonic() - started:6.1f}s] {line}")

    with _admin(settings) as admin:
        try:
            report = admin.build(method=chosen, progress=show, force=force)
        except ImageBuildError as e:
            raise BeamclawCliError(str(e)) from e
    verdict = "built" if report.built else "already up to date"
    typer.echo(f"{report.image}: {verdict} ({report.method}, {report.seconds:.1f} s)")


def status_command(config: Path | None = _CONFIG, as_json: bool = _JSON) -> None:
    """Engine, image and limits; exit 1 when the sandbox could not run a script."""
    from beamclaw_obs import beamclaw_home
    from beamclaw_sandbox import DockerUnavailableError, ImageRecipe, SandboxAdmin

    settings = _settings(config)
    recipe = ImageRecipe.from_settings(settings)
    out: dict[str, Any] = {
        "enabled": settings.enabled,
        "image": recipe.image,
        "recipe": recipe.digest,
        "limits": limits_line(settings),
    }
    try:
        admin = SandboxAdmin.open(settings, beamclaw_home())
    except DockerUnavailableError as e:
        out.update(engine="down", reason=e.reason, image_state="unknown", containers=0)
    else:
        with admin:
            out["engine"] = "up"
            out["image_state"] = admin.image_state()
            out["containers"] = len(admin.containers())
    if as_json:
        typer.echo(json.dumps(out, indent=2))
    else:
        typer.echo(f"enabled:    {'yes' if settings.enabled else 'no ([sandbox] enabled = false)'}")
        engine = out["engine"] if out["engine"] == "up" else f"down: {out['reason']}"
        typer.echo(f"engine:     {engine}")
        hint = "" if out["image_state"] == "present" else "  (run `beamclaw sandbox build`)"
        typer.echo(f"image:      {recipe.image} {out['image_state']}{hint}")
        typer.echo(f"containers: {out['containers']}")
        typer.echo(f"limits:     {out['limits']}")
    if out["engine"] != "up" or out["image_state"] != "present":
        raise typer.Exit(1)


def list_command(config: Path | None = _CONFIG, as_json: bool = _JSON) -> None:
    """This home's sandbox containers."""
    with _admin(_settings(config)) as admin:
        rows = admin.containers()
    if as_json:
        typer.echo(json.dumps([r.__dict__ for r in rows], indent=2))
        return
    if not rows:
        typer.echo("no sandbox containers")
        return
    for row in rows:
        typer.echo(f"{row.name}  {row.status:<8} {row.scope:<8} {row.key}")


def kill_command(
    target: str = typer.Argument("", help="A container name or scope key (as `list` shows)."),
    config: Path | None = _CONFIG,
    everything: bool = typer.Option(False, "--all", help="Remove every container of this home."),
) -> None:
    """Remove sandbox containers of this home."""
    if bool(target) == everything:
        raise UsageError("name one container (or scope key), or pass --all")
    with _admin(_settings(config)) as admin:
        chosen = [r for r in admin.containers() if everything or target in (r.name, r.key, r.id)]
        if not chosen:
            raise BeamclawCliError(f"no sandbox container {target!r} (see `beamclaw sandbox list`)")
        for row in chosen:
            admin.remove(row.id)
            typer.echo(f"removed {row.name} ({row.key})")


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="sandbox",
        help="The Docker sandbox of the exec tool: build its image, inspect, clean up.",
        no_args_is_help=True,
    )
    app.add_typer(group, name="sandbox")
    group.command("build")(build_command)
    group.command("status")(status_command)
    group.command("list")(list_command)
    group.command("kill")(kill_command)
