"""Apply onboarding choices: key files, beamclaw.toml, the agent's persona.

Invariants: the config file never receives a secret (keys go to 0600 files under
``$BEAMCLAW_HOME/secrets/`` and the file refers to them); the new file is validated by
the real config loader before it replaces the old one, so a failed run leaves the old
file as it was; keys and tables not chosen are left byte for byte.
"""

from __future__ import annotations

import os
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from beamclaw_cli.onboard.persona import write_persona
from beamclaw_cli.onboard.presets import ProviderPreset
from beamclaw_cli.onboard.secret_files import new_gateway_token, store_secret
from beamclaw_cli.onboard.toml_edit import set_table_keys, toml_secret, toml_string
from beamclaw_core import ensure_agent
from beamclaw_gateway import BeamclawConfig, load_config
from beamclaw_obs import ConfigError, LoadedConfig, Secret, beamclaw_home

CONFIG_FILE_NAME = "beamclaw.toml"
GATEWAY_TOKEN_FILE = "gateway_token"  # noqa: S105 - a file name, not a token


@dataclass(frozen=True, slots=True)
class KeyChoice:
    """How the provider's key is reached: kept as configured, a variable, a value to
    store in a key file, or no key at all (local servers)."""

    how: Literal["keep", "env", "store", "none"]
    value: str = ""
    """The variable name (``env``) or the key itself (``store``); never printed."""


@dataclass(frozen=True, slots=True)
class Choices:
    preset: ProviderPreset
    base_url: str
    model: str
    key: KeyChoice
    agent_name: str | None
    personality: str | None
    gateway_token: bool | None
    """True: make (or keep) one; False: remove it; None: leave as it is."""


@dataclass(frozen=True, slots=True)
class Applied:
    """What :func:`apply` wrote, for the summary (paths only, no secret)."""

    config_path: Path
    loaded: LoadedConfig[BeamclawConfig]
    key_file: Path | None
    token_file: Path | None
    """The gateway token file written (or reused) and now configured."""
    token_kept: str | None
    """How an already usable gateway token is configured (``env:VAR``), left as it was."""
    workspace: Path


def config_target() -> Path:
    """``$BEAMCLAW_CONFIG`` when set (the file the loader reads), else the home's file."""
    explicit = os.environ.get("BEAMCLAW_CONFIG")
    return Path(explicit).expanduser() if explicit else beamclaw_home() / CONFIG_FILE_NAME


def _secret_source(secret: Secret | None) -> str | None:
    if secret is None or secret.literal is not None:
        return None
    if secret.env is not None:
        return toml_secret("env", secret.env)
    return toml_secret("file", secret.file or "")


def _key_value(
    choices: Choices, current: BeamclawConfig, home: Path
) -> tuple[str | None, Path | None]:
    """The ``api_key`` TOML source to write (None removes it) and the key file written."""
    key = choices.key
    if key.how == "none":
        return None, None
    if key.how == "env":
        return toml_secret("env", key.value), None
    if key.how == "store":
        relative = store_secret(home, f"{choices.preset.name}_api_key", key.value)
        return toml_secret("file", relative), home / relative
    existing = current.core.providers.get(choices.preset.name)
    return _secret_source(existing.api_key if existing else None), None


def apply(choices: Choices, current: BeamclawConfig) -> Applied:
    """Write the key files, beamclaw.toml and the persona; returns what was written.

    Raises:
        ConfigError: the edited file does not load (the old one is left untouched).
    """
    home = beamclaw_home()
    home.mkdir(parents=True, exist_ok=True)
    target = config_target()
    text = target.read_text(encoding="utf-8") if target.is_file() else ""
    api_key, key_file = _key_value(choices, current, home)
    provider_keys: dict[str, str | None] = {
        "kind": toml_string(choices.preset.kind),
        "base_url": toml_string(choices.base_url),
        "model": toml_string(choices.model),
    }
    keep_literal = choices.key.how == "keep" and api_key is None
    if not keep_literal:
        provider_keys["api_key"] = api_key
    text = set_table_keys(text, "core", {"default_provider": toml_string(choices.preset.name)})
    text = set_table_keys(text, f"core.providers.{choices.preset.name}", provider_keys)
    token_file: Path | None = None
    token_kept: str | None = None
    configured = current.gateway.http.token
    if choices.gateway_token is True and configured is not None and configured.is_available():
        token_kept = configured.describe()  # a usable token stays where the operator put it
    elif choices.gateway_token is True:
        token_file = home / "secrets" / GATEWAY_TOKEN_FILE
        if not Secret(file=str(token_file)).is_available():
            store_secret(home, GATEWAY_TOKEN_FILE, new_gateway_token())
        text = set_table_keys(
            text, "gateway.http", {"token": toml_secret("file", f"secrets/{GATEWAY_TOKEN_FILE}")}
        )
    elif choices.gateway_token is False:
        text = set_table_keys(text, "gateway.http", {"token": None})
    loaded = _replace_validated(target, text)
    workspace = ensure_agent(loaded.settings.core.default_agent).path
    write_persona(workspace, choices.agent_name, choices.personality)
    return Applied(target, loaded, key_file, token_file, token_kept, workspace)


def _replace_validated(target: Path, text: str) -> LoadedConfig[BeamclawConfig]:
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = target.with_name(f".{target.name}.onboard-{secrets.token_hex(4)}")
    try:
        staging.write_text(text, encoding="utf-8")
        try:
            load_config(staging)
        except ConfigError as exc:
            raise ConfigError(str(target), [*exc.problems, "the file was left unchanged"]) from exc
        staging.replace(target)
    finally:
        staging.unlink(missing_ok=True)
    return load_config(target)
