"""Make an MCP tool's input schema acceptable to every LLM provider.

MCP servers send arbitrary JSON Schema; providers are stricter (OpenAI and Anthropic
require a top-level ``type: object``; several reject ``$schema``/``$id``, boolean
sub-schemas, dangling ``required`` entries or ``$ref`` into ``$defs``). ``sanitize_schema``
returns a new schema with:

* a top-level ``{"type": "object", "properties": {...}}`` (a non-object schema is
  replaced by an empty object schema — the tool then takes no declared arguments);
* local ``$ref`` (``#/$defs/X``, ``#/definitions/X``) inlined up to a depth bound
  (a recursive reference that hits the bound becomes ``{}``: "any value");
* ``$schema``, ``$id``, ``$comment`` and ``$defs``/``definitions`` removed;
* boolean sub-schemas turned into ``{}`` (``true``) or ``{"not": {}}`` (``false``);
* ``required`` filtered to names that exist in ``properties``.

Invariant: the input is never mutated; the output is JSON-serialisable.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

_DROP_KEYS = frozenset({"$schema", "$id", "$comment", "$defs", "definitions"})
_MAX_REF_DEPTH = 8
_SCHEMA_MAP_KEYS = frozenset({"properties", "patternProperties", "dependentSchemas"})
_SCHEMA_LIST_KEYS = frozenset({"anyOf", "oneOf", "allOf", "prefixItems"})
_SCHEMA_KEYS = frozenset(
    {"items", "additionalProperties", "not", "contains", "propertyNames", "if", "then", "else"}
)


def sanitize_schema(schema: Any) -> dict[str, Any]:
    """Return a provider-safe copy of ``schema`` (see the module docstring)."""
    if not isinstance(schema, Mapping):
        return {"type": "object", "properties": {}}
    root = cast(Mapping[str, Any], schema)
    defs: dict[str, Any] = {}
    for key in ("$defs", "definitions"):
        found = root.get(key)
        if isinstance(found, Mapping):
            for name, value in cast(Mapping[str, Any], found).items():
                defs[f"#/{key}/{name}"] = value
    cleaned = _clean(root, defs, 0)
    if cleaned.get("type") != "object":
        if "properties" in cleaned and "type" not in cleaned:
            cleaned["type"] = "object"
        else:
            return {"type": "object", "properties": {}}
    props = cleaned.get("properties")
    if not isinstance(props, dict):
        props = {}
    cleaned["properties"] = props
    required = cleaned.get("required")
    if isinstance(required, list):
        names = [r for r in cast(list[Any], required) if isinstance(r, str) and r in props]
        if names:
            cleaned["required"] = names
        else:
            cleaned.pop("required", None)
    elif "required" in cleaned:
        cleaned.pop("required")
    return cleaned


def _clean_any(value: Any, defs: Mapping[str, Any], depth: int) -> dict[str, Any]:
    if value is True:
        return {}
    if value is False:
        return {"not": {}}
    if isinstance(value, Mapping):
        return _clean(cast(Mapping[str, Any], value), defs, depth)
    return {}


def _clean(schema: Mapping[str, Any], defs: Mapping[str, Any], depth: int) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str):
        target = defs.get(ref)
        if target is None or depth >= _MAX_REF_DEPTH:
            base: dict[str, Any] = {}
        else:
            base = _clean_any(target, defs, depth + 1)
        # sibling keywords next to $ref (draft 2019+) are kept and win
        rest = {k: v for k, v in schema.items() if k != "$ref"}
        if rest:
            base.update(_clean(rest, defs, depth))
        return base
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key in _DROP_KEYS:
            continue
        if key in _SCHEMA_MAP_KEYS and isinstance(value, Mapping):
            out[key] = {
                str(k): _clean_any(v, defs, depth)
                for k, v in cast(Mapping[str, Any], value).items()
            }
        elif key in _SCHEMA_LIST_KEYS and isinstance(value, list):
            out[key] = [_clean_any(v, defs, depth) for v in cast(list[Any], value)]
        elif key in _SCHEMA_KEYS:
            if key == "items" and isinstance(value, list):
                out[key] = [_clean_any(v, defs, depth) for v in cast(list[Any], value)]
            elif key == "additionalProperties" and isinstance(value, bool):
                out[key] = value
            else:
                out[key] = _clean_any(value, defs, depth)
        else:
            out[key] = _copy_json(value)
    return out


def _copy_json(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {str(k): _copy_json(v) for k, v in cast(Mapping[Any, Any], value).items()}
    if isinstance(value, list | tuple):
        return [_copy_json(v) for v in cast(list[Any], value)]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)
