"""``beamclaw config show|check``: the effective configuration, secrets masked."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from beamclaw_cli.errors import BeamclawCliError


def _drop_none(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _drop_none(v) for k, v in value.items() if v is not None}  # type: ignore[union-attr]
    if isinstance(value, list):
        return [_drop_none(v) for v in value]  # type: ignore[union-attr]
    return value


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Inspect and validate the configuration.", no_args_is_help=True)
    app.add_typer(group, name="config")
    config_opt = typer.Option(
        None, "--config", "-c", help="Config file.", exists=True, dir_okay=False
    )

    @group.command("show")
    def show(
        config: Path | None = config_opt,
        as_json: bool = typer.Option(False, "--json", help="JSON instead of TOML."),
    ) -> None:
        """Print the effective configuration (file + environment), secrets masked."""
        import tomli_w

        from beamclaw_gateway import load_config

        loaded = load_config(config)
        data = loaded.settings.model_dump(mode="json")
        if as_json:
            print(json.dumps({"source": loaded.source, "config": data}, indent=2))
            return
        print(f"# effective configuration (source: {loaded.source})")
        print(tomli_w.dumps(_drop_none(data)))

    @group.command("check")
    def check(config: Path | None = config_opt) -> None:
        """Validate the configuration; exit 1 on an error, print warnings."""
        from beamclaw_gateway import load_config
        from beamclaw_obs import ConfigError

        try:
            loaded = load_config(config)
        except ConfigError as exc:
            raise BeamclawCliError(str(exc)) from exc
        for warning in loaded.warnings:
            print(f"[warn] {warning}")
        print(f"[ok] configuration valid ({loaded.source})")
