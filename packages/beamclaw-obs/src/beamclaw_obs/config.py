"""Configuration loading (DESIGN.md section 5).

Lookup: ``$BEAMCLAW_CONFIG`` if set (it must exist), else ``$BEAMCLAW_HOME/beamclaw.toml``
if present, else the packaged defaults (the models' defaults; ``config/beamclaw.toml`` in
the repository spells them out and a test keeps the two equal). Environment variables
``BEAMCLAW_<SECTION>__<KEY>…`` override the file (pydantic-settings, ``__`` nesting).

A malformed file or a wrong type is a :class:`ConfigError` naming the file, the key path
and the reason. An unknown key is a warning (returned and logged), never a crash.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from types import UnionType
from typing import Any, ClassVar, Generic, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ValidationError
from pydantic.fields import FieldInfo
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from beamclaw_obs.config_file import (
    DEFAULTS_SOURCE,
    describe_error,
    find_config_file,
    read_toml,
)
from beamclaw_obs.errors import ConfigError

_file_data: ContextVar[dict[str, Any] | None] = ContextVar(
    "beamclaw_config_file_data", default=None
)


class _FileSource(PydanticBaseSettingsSource):
    def get_field_value(self, field: FieldInfo, field_name: str) -> tuple[Any, str, bool]:
        return (_file_data.get() or {}).get(field_name), field_name, False

    def __call__(self) -> dict[str, Any]:
        return dict(_file_data.get() or {})


class BeamclawSettingsBase(BaseSettings):
    """Root settings: sections as fields; ``BEAMCLAW_`` env overrides with ``__`` nesting."""

    model_config = SettingsConfigDict(
        env_prefix="BEAMCLAW_",
        env_nested_delimiter="__",
        extra="ignore",
        case_sensitive=False,
        validate_default=True,
    )
    #: top-level environment names that are not section overrides
    reserved_env: ClassVar[frozenset[str]] = frozenset(
        {
            "BEAMCLAW_HOME",
            "BEAMCLAW_CONFIG",
            "BEAMCLAW_PORT",
            "BEAMCLAW_DATABASE_URL",
            "BEAMCLAW_USER",
        }
    )

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        return (init_settings, env_settings, _FileSource(settings_cls))


S = TypeVar("S", bound=BeamclawSettingsBase)


@dataclass
class LoadedConfig(Generic[S]):
    """A validated configuration plus where it came from and what was ignored."""

    settings: S
    source: str
    path: Path | None
    warnings: list[str] = field(default_factory=list)


def _model_of(annotation: Any) -> tuple[str, type[BaseModel]] | None:
    """Classify a field annotation: ``("model"|"dict"|"list", Model)`` or None."""
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        for arg in get_args(annotation):
            found = _model_of(arg)
            if found is not None:
                return found
        return None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return ("model", annotation)
    if origin is dict:
        args = get_args(annotation)
        if len(args) == 2 and isinstance(args[1], type) and issubclass(args[1], BaseModel):
            return ("dict", args[1])
    if origin is list:
        args = get_args(annotation)
        if args and isinstance(args[0], type) and issubclass(args[0], BaseModel):
            return ("list", args[0])
    return None


def unknown_keys(model: type[BaseModel], data: Mapping[str, Any], prefix: str = "") -> list[str]:
    """Dotted paths in ``data`` that ``model`` does not define (recursively)."""
    return [path for path, _ in _unknown(model, data, prefix)]


def _unknown(
    model: type[BaseModel], data: Mapping[str, Any], prefix: str = ""
) -> list[tuple[str, str | None]]:
    """Unknown dotted paths, each with the section's note when it is a removed key
    (``Section.replaced_keys``)."""
    found: list[tuple[str, str | None]] = []
    fields = model.model_fields
    aliases = {f.alias: name for name, f in fields.items() if f.alias}
    replaced: Mapping[str, str] = getattr(model, "replaced_keys", {})
    for key, value in data.items():
        name = aliases.get(key, key)
        path = f"{prefix}{key}"
        if name not in fields:
            if model.model_config.get("extra") != "allow":
                found.append((path, replaced.get(key)))
            continue
        kind = _model_of(fields[name].annotation)
        if kind is None:
            continue
        shape, sub = kind
        if sub.__name__ == "Secret":
            continue
        if shape == "model" and isinstance(value, Mapping):
            found += _unknown(sub, value, f"{path}.")  # pyright: ignore[reportUnknownArgumentType]
        elif shape == "dict" and isinstance(value, Mapping):
            for k, v in value.items():  # pyright: ignore[reportUnknownVariableType]
                if isinstance(v, Mapping):
                    found += _unknown(sub, v, f"{path}.{k}.")  # pyright: ignore[reportUnknownArgumentType]
        elif shape == "list" and isinstance(value, list):
            for i, v in enumerate(value):  # pyright: ignore[reportUnknownVariableType,reportUnknownArgumentType]
                if isinstance(v, Mapping):
                    found += _unknown(sub, v, f"{path}[{i}].")  # pyright: ignore[reportUnknownArgumentType]
    return found


def load_settings(
    settings_cls: type[S],
    path: Path | None = None,
    *,
    use_lookup: bool = True,
) -> LoadedConfig[S]:
    """Load and validate configuration.

    Args:
        settings_cls: the root settings model (sections as fields).
        path: an explicit file; otherwise the lookup order decides (when ``use_lookup``).
        use_lookup: when False and no ``path``, only defaults and the environment apply.
    """
    if path is None and use_lookup:
        path = find_config_file()
    data = read_toml(path) if path is not None else {}
    source = str(path) if path is not None else DEFAULTS_SOURCE
    token = _file_data.set(data)
    try:
        settings = settings_cls()
    except ValidationError as exc:
        raise ConfigError(source, [describe_error(e) for e in exc.errors()]) from exc
    finally:
        _file_data.reset(token)
    warnings = [
        f"{source}: unknown key {k!r} ignored" + (f" ({note})" if note else "")
        for k, note in _unknown(settings_cls, data)
    ]
    if warnings:
        from loguru import logger  # only when there is something to say: ~20 ms

        for w in warnings:
            logger.warning(w)
    return LoadedConfig(settings=settings, source=source, path=path, warnings=warnings)
