"""One section's table of settings — the file's keys, then the environment's overrides —
read with the standard library alone.

:func:`read_table` is the part of :func:`~beamclaw_obs.read_section` that needs no model:
``beamclaw status`` and ``beamclaw agent list`` read a scalar key or two with it and check
them by hand, so they import no pydantic (building a section's model class costs more
than the rest of those commands). What a key of the table means is the section model's
business: a :class:`TableShape` tells the reader which keys lead to nested tables and
whose environment values are JSON; :data:`FLAT` says none (right for scalar keys).

Environment rules (pydantic-settings', kept to the branch that leads to the table):
``BEAMCLAW_<ROOT>`` holds the root table as JSON; ``BEAMCLAW_<ROOT>__<A>__<B>`` sets one
value (JSON when it names a table, or its field is a table or a list), names lower-cased,
later variables overwriting earlier ones in the environment's order; the nested names are
laid over the JSON root.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

from beamclaw_obs.config_file import DEFAULTS_SOURCE, find_config_file, read_toml

ENV_PREFIX = "beamclaw_"
ENV_NESTING = "__"


class TableShape(Protocol):
    """What a section's model says about its keys, as far as reading the table needs."""

    def child(self, key: str) -> TableShape | None:
        """The shape of the table ``key`` holds (None: not a table)."""
        ...

    def is_json(self, key: str) -> bool:
        """Whether an environment value for ``key`` is JSON (a table, a list...)."""
        ...


class _Flat:
    def child(self, key: str) -> TableShape | None:
        return None

    def is_json(self, key: str) -> bool:
        return False


FLAT: TableShape = _Flat()
"""A table of scalars: every environment value is taken as the string it is."""


def merge(base: dict[str, Any], top: Mapping[str, Any]) -> dict[str, Any]:
    """``top`` over ``base``, tables merged key by key (pydantic-settings' deep update)."""
    merged = dict(base)
    for key, value in top.items():
        below = merged.get(key)
        if isinstance(value, Mapping) and isinstance(below, dict):
            merged[key] = merge(below, value)  # pyright: ignore[reportUnknownArgumentType]
        else:
            merged[key] = value
    return merged


def _decode(raw: str, as_json: bool) -> Any:
    if not as_json:
        return raw
    try:
        return json.loads(raw)
    except ValueError:
        return raw


def environment_table(
    keys: tuple[str, ...], shape: TableShape, environ: Mapping[str, str]
) -> dict[str, Any]:
    """The environment's overrides inside the table at ``keys`` (``shape``: the root
    table's, ``keys[0]``'s model)."""
    root, inside = ENV_PREFIX + keys[0], keys[1:]
    exploded: dict[str, Any] = {}
    whole: Any = None
    for name, raw in environ.items():
        lowered = name.lower()
        if lowered == root:
            whole = _decode(raw, True)
            continue
        if not lowered.startswith(root + ENV_NESTING):
            continue
        *parents, last = lowered[len(root) + len(ENV_NESTING) :].split(ENV_NESTING)
        path = (*parents, last)
        if path[: len(inside)] != inside[: len(path)]:
            continue  # another branch of the root table
        current: TableShape | None = shape
        for depth, key in enumerate(parents, start=1):
            if depth > len(inside):
                current = current.child(key) if current is not None else None
        if len(path) <= len(inside):
            as_json = True  # the table itself or a table above it
        else:
            as_json = current is not None and current.is_json(last)
        node: Any = exploded
        for key in parents:
            node = node.setdefault(key, {}) if isinstance(node, dict) else None
        if isinstance(node, dict):
            node[last] = _decode(raw, as_json) if raw else raw
    merged: Any = merge(whole, exploded) if isinstance(whole, dict) else exploded  # pyright: ignore[reportUnknownArgumentType]
    for key in inside:
        merged = merged.get(key, {}) if isinstance(merged, Mapping) else {}
    return dict(merged) if isinstance(merged, Mapping) else {}  # pyright: ignore[reportUnknownArgumentType]


def read_table(
    keys: tuple[str, ...],
    shape: TableShape = FLAT,
    path: Path | None = None,
    *,
    environ: Mapping[str, str] | None = None,
) -> tuple[dict[str, Any], str]:
    """The table at the dotted path ``keys`` (file, then environment) and where it came
    from (the file's path, or the packaged defaults' name) for error messages.

    ``path`` is an explicit file; otherwise the lookup order decides (``$BEAMCLAW_CONFIG``,
    ``$BEAMCLAW_HOME/beamclaw.toml``, the packaged defaults). Raises
    :class:`~beamclaw_obs.ConfigError` for a missing (explicit) or malformed file.
    """
    env = os.environ if environ is None else environ
    if path is None:
        path = find_config_file(env)
    data: Any = read_toml(path) if path is not None else {}
    for key in keys:
        data = data.get(key, {}) if isinstance(data, Mapping) else {}
    table: dict[str, Any] = dict(data) if isinstance(data, Mapping) else {}  # pyright: ignore[reportUnknownArgumentType]
    table = merge(table, environment_table(keys, shape, env))
    return table, str(path) if path is not None else DEFAULTS_SOURCE
