"""A configuration section, and reading one section without the whole configuration.

:func:`read_section` is for commands that need a key or two (``beamclaw status``: the
``[gateway.http]`` address; ``beamclaw agent list``: ``[core] default_agent``). It takes the
table at a dotted path of the file the lookup order selects, lays the environment's
``BEAMCLAW_<A>__<B>__<KEY>`` overrides over it the way the full loader does (nested names,
case-insensitive, a JSON value for a table, the most nested name winning), and validates it
with that section's model alone. It loads neither pydantic-settings nor any other section's
model, so it costs a fraction of :func:`~beamclaw_obs.load_settings`.

Invariant: for the sections it reads, the values equal those of
:func:`~beamclaw_obs.load_settings` on the same file and environment (a test compares
them). It does not report unknown keys or problems in other sections: the full loader
(``beamclaw serve``, ``beamclaw config check``) does.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from types import UnionType
from typing import Any, ClassVar, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError

from beamclaw_obs.config_file import (
    DEFAULTS_SOURCE,
    describe_error,
    find_config_file,
    read_toml,
)
from beamclaw_obs.errors import ConfigError

ENV_PREFIX = "beamclaw_"
ENV_NESTING = "__"


class Section(BaseModel):
    """Base for a configuration section: unknown keys are tolerated (and warned about).

    A key's meaning is the docstring under its attribute; ``scripts/gen_config_docs.py``
    reads those from the source for ``docs/configuration.md``. They are not parsed at run
    time: pydantic's ``use_attribute_docstrings`` re-reads and parses every section's source
    when its class is built, about a quarter of a CLI command's time.
    """

    model_config = ConfigDict(extra="ignore", validate_default=True)

    replaced_keys: ClassVar[Mapping[str, str]] = {}
    """Keys this section no longer has -> what replaced them (added to the warning)."""


M = TypeVar("M", bound=BaseModel)


def _is_complex(annotation: Any) -> bool:
    """Whether an environment value for a field of this type is JSON (as pydantic-settings
    decodes it): a model, a mapping, a sequence, or an optional of one."""
    origin = get_origin(annotation)
    if origin in (Union, UnionType):
        return any(_is_complex(a) for a in get_args(annotation) if a is not type(None))
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return True
    return origin in (dict, list, tuple, set, frozenset) or annotation in (dict, list)


def _field_type(model: type[BaseModel] | None, key: str) -> tuple[Any, type[BaseModel] | None]:
    """The annotation of ``key`` in ``model`` and the model it leads to (None: none)."""
    if model is None:
        return None, None
    field = model.model_fields.get(key)
    if field is None:
        return None, None
    annotation = field.annotation
    candidates = get_args(annotation) if get_origin(annotation) in (Union, UnionType) else ()
    for candidate in (annotation, *candidates):
        if isinstance(candidate, type) and issubclass(candidate, BaseModel):
            return annotation, candidate
    return annotation, None


def _decode(raw: str, annotation: Any) -> Any:
    if not _is_complex(annotation):
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def _merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``, tables merged key by key (pydantic-settings' deep update)."""
    merged = dict(base)
    for key, value in top.items():
        below = merged.get(key)
        if isinstance(value, Mapping) and isinstance(below, dict):
            merged[key] = _merge(below, value)  # pyright: ignore[reportUnknownArgumentType]
        else:
            merged[key] = value
    return merged


def _environment_table(
    keys: tuple[str, ...], model: type[BaseModel], environ: Mapping[str, str]
) -> dict[str, Any]:
    """The environment's overrides inside the table at ``keys``: pydantic-settings' rules
    for the root field ``keys[0]``, kept to the branch that leads to the table.

    ``BEAMCLAW_<ROOT>`` holds the root table as JSON; ``BEAMCLAW_<ROOT>__<A>__<B>`` sets
    one value (JSON when it names a table or its field is a table or a list), names
    lower-cased, later variables overwriting earlier ones in the environment's order; the
    nested names are laid over the JSON root.
    """
    root, inside = ENV_PREFIX + keys[0], keys[1:]
    exploded: dict[str, Any] = {}
    whole: Any = None
    for name, raw in environ.items():
        lowered = name.lower()
        if lowered == root:
            whole = _decode(raw, dict)
            continue
        if not lowered.startswith(root + ENV_NESTING):
            continue
        *parents, last = lowered[len(root) + len(ENV_NESTING) :].split(ENV_NESTING)
        path = (*parents, last)
        if path[: len(inside)] != inside[: len(path)]:
            continue  # another branch of the root table
        current: type[BaseModel] | None = model
        for depth, key in enumerate(parents, start=1):
            if depth > len(inside):
                _, current = _field_type(current, key)
        if len(path) <= len(inside):
            annotation: Any = dict  # the table itself or a table above it
        else:
            annotation, _ = _field_type(current, last)
        node: Any = exploded
        for key in parents:
            node = node.setdefault(key, {}) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node[last] = _decode(raw, annotation) if raw else raw
    merged: Any = _merge(whole, exploded) if isinstance(whole, dict) else exploded  # pyright: ignore[reportUnknownArgumentType]
    for key in inside:
        merged = merged.get(key, {}) if isinstance(merged, Mapping) else {}
    return dict(merged) if isinstance(merged, Mapping) else {}  # pyright: ignore[reportUnknownArgumentType]


def read_section(
    keys: tuple[str, ...],
    model: type[M],
    path: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> M:
    """The section at the dotted path ``keys`` (``("gateway", "http")``), file then env.

    ``path`` is an explicit file; otherwise the lookup order decides (``$BEAMCLAW_CONFIG``,
    ``$BEAMCLAW_HOME/beamclaw.toml``, the packaged defaults).

    Raises:
        ConfigError: the file is missing (explicit), malformed, or the section invalid.
    """
    env = os.environ if environ is None else environ
    if path is None:
        path = find_config_file(env)
    data: Any = read_toml(path) if path is not None else {}
    for key in keys:
        data = data.get(key, {}) if isinstance(data, Mapping) else {}
    table: dict[str, Any] = dict(data) if isinstance(data, Mapping) else {}  # pyright: ignore[reportUnknownArgumentType]
    table = _merge(table, _environment_table(keys, model, env))
    try:
        return model.model_validate(table)
    except ValidationError as exc:
        source = str(path) if path is not None else DEFAULTS_SOURCE
        prefix = ".".join(keys)
        raise ConfigError(source, [describe_error(e, prefix) for e in exc.errors()]) from exc
