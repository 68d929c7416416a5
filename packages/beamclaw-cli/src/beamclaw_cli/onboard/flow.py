"""Turn flags and answers into :class:`~beamclaw_cli.onboard.setup.Choices`.

A flag given is never asked again. Interactive defaults are the current configuration
(so a re-run with Enter everywhere changes nothing) or the preset's. The key is read
with hidden input and never echoed. Non-interactive, a missing required choice is a
:class:`~beamclaw_cli.errors.UsageError` (exit 2) naming the flag.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import typer

from beamclaw_cli.errors import UsageError
from beamclaw_cli.onboard.persona import current_name
from beamclaw_cli.onboard.presets import PRESETS, ProviderPreset, preset, preset_names
from beamclaw_cli.onboard.setup import Choices, KeyChoice
from beamclaw_core.workspace import BootstrapFile, agent_dir
from beamclaw_gateway import BeamclawConfig


@dataclass(frozen=True, slots=True)
class Flags:
    provider: str | None
    base_url: str | None
    model: str | None
    api_key: str | None
    api_key_env: str | None
    agent_name: str | None
    personality: str | None
    gateway_token: bool | None


def _choose_preset(flags: Flags, current: BeamclawConfig, interactive: bool) -> ProviderPreset:
    if flags.provider is not None:
        chosen = preset(flags.provider)
        if chosen is None:
            raise UsageError(
                f"--provider {flags.provider!r} is not one of {', '.join(preset_names())}"
            )
        return chosen
    if not interactive:
        raise UsageError(f"--provider is required ({', '.join(preset_names())})")
    default = preset(current.core.default_provider) or PRESETS[0]
    typer.echo("Which LLM provider?")
    for number, p in enumerate(PRESETS, start=1):
        typer.echo(f"  {number}. {p.name:<11} {p.label}")
    while True:
        answer = str(typer.prompt("Provider", default=default.name)).strip()
        if answer.isdigit() and 1 <= int(answer) <= len(PRESETS):
            return PRESETS[int(answer) - 1]
        chosen = preset(answer)
        if chosen is not None:
            return chosen
        typer.echo(f"  choose 1-{len(PRESETS)} or a name ({', '.join(preset_names())})")


def _base_url(p: ProviderPreset, flags: Flags, current: BeamclawConfig, interactive: bool) -> str:
    if flags.base_url is not None:
        return flags.base_url
    existing = current.core.providers.get(p.name)
    default = existing.base_url if existing is not None else p.base_url
    if interactive and p.name in ("local", "custom"):
        return str(typer.prompt("Base URL (the API root, e.g. ending in /v1)", default=default))
    if default is None:
        raise UsageError(f"--base-url is required for --provider {p.name}")
    return default


def _model(p: ProviderPreset, flags: Flags, current: BeamclawConfig, interactive: bool) -> str:
    if flags.model is not None:
        return flags.model
    existing = current.core.providers.get(p.name)
    default = existing.model if existing is not None else p.model
    if not interactive:
        return default
    return str(typer.prompt("Model", default=default)).strip()


def _key(
    p: ProviderPreset,
    flags: Flags,
    current: BeamclawConfig,
    interactive: bool,
    environ: Mapping[str, str],
) -> KeyChoice:
    if flags.api_key is not None:
        return KeyChoice("store", flags.api_key)
    if flags.api_key_env is not None:
        return KeyChoice("env", flags.api_key_env)
    existing = current.core.providers.get(p.name)
    configured = existing.api_key if existing is not None else None
    have = configured is not None and configured.is_available(environ)
    exported = p.key_env is not None and bool(environ.get(p.key_env))
    fallback = (
        KeyChoice("keep")
        if have
        else KeyChoice("env", p.key_env or "")
        if exported
        else KeyChoice("none")
    )
    if not interactive:
        if p.needs_key and fallback.how == "none":
            raise UsageError(
                f"--provider {p.name} needs a key: give --api-key or --api-key-env"
                + (f" (or export {p.key_env})" if p.key_env else "")
            )
        return fallback
    if have and configured is not None:
        empty_means = f"keep the key from {configured.describe()}"
    elif exported:
        empty_means = f"use ${p.key_env}"
    else:
        empty_means = "a key is required" if p.needs_key else "no key"
    while True:
        typed = str(
            typer.prompt(
                f"API key (input hidden; empty: {empty_means})",
                default="",
                hide_input=True,
                show_default=False,
            )
        ).strip()
        if typed:
            return KeyChoice("store", typed)
        if not (p.needs_key and fallback.how == "none"):
            return fallback
        typer.echo(f"  {p.label} needs a key")


def _persona(
    flags: Flags, current: BeamclawConfig, interactive: bool
) -> tuple[str | None, str | None]:
    if not interactive:
        return flags.agent_name, flags.personality
    identity = agent_dir(current.core.default_agent) / BootstrapFile.IDENTITY.value
    existing = current_name(identity.read_text("utf-8")) if identity.is_file() else None
    name = flags.agent_name
    if name is None:
        typed = str(
            typer.prompt("Agent name", default=existing or "", show_default=bool(existing))
        ).strip()
        name = typed if typed and typed != existing else None
    personality = flags.personality
    if personality is None:
        typed = str(
            typer.prompt(
                "Personality, in a sentence or two (empty: keep)", default="", show_default=False
            )
        ).strip()
        personality = typed or None
    return name, personality


def _token(flags: Flags, current: BeamclawConfig, interactive: bool) -> bool | None:
    if flags.gateway_token is not None or not interactive:
        return flags.gateway_token
    has = current.gateway.http.token is not None
    return typer.confirm("Require a gateway token on the API?", default=has)


def gather(
    flags: Flags, current: BeamclawConfig, *, interactive: bool, environ: Mapping[str, str]
) -> Choices:
    """Every choice, from flags first, then the terminal (or defaults when not interactive)."""
    chosen = _choose_preset(flags, current, interactive)
    base_url = _base_url(chosen, flags, current, interactive)
    model = _model(chosen, flags, current, interactive)
    key = _key(chosen, flags, current, interactive, environ)
    name, personality = _persona(flags, current, interactive)
    token = _token(flags, current, interactive)
    return Choices(chosen, base_url, model, key, name, personality, token)
