"""One source of truth for tool schemas: pydantic argument models → JSON Schema.

:func:`args_schema` turns an argument model into a self-contained JSON Schema object
(``$ref``s inlined, ``title`` noise removed). :func:`openai_tool` and
:func:`anthropic_tool` wrap a :class:`~beamclaw_tools.types.ToolDef` in each provider's
envelope without changing the schema itself.
"""

from __future__ import annotations

from typing import Any, cast

from pydantic import BaseModel

from beamclaw_tools.types import ToolDef


def _inline(node: Any, defs: dict[str, Any]) -> Any:
    if isinstance(node, dict):
        mapping = cast(dict[str, Any], node)
        ref = mapping.get("$ref")
        if isinstance(ref, str) and ref.startswith("#/$defs/"):
            target = _inline(defs[ref.removeprefix("#/$defs/")], defs)
            extra = {k: _inline(v, defs) for k, v in mapping.items() if k != "$ref"}
            return {**target, **extra}
        out: dict[str, Any] = {}
        for key, value in mapping.items():
            if key in ("$defs", "title"):
                continue
            out[key] = _inline(value, defs)
        return out
    if isinstance(node, list):
        return [_inline(v, defs) for v in cast(list[Any], node)]
    return node


def args_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A self-contained JSON Schema object for an argument model."""
    raw = model.model_json_schema()
    defs = cast(dict[str, Any], raw.get("$defs", {}))
    schema = cast(dict[str, Any], _inline(raw, defs))
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def openai_tool(definition: ToolDef) -> dict[str, Any]:
    """The OpenAI (chat completions) function-tool form."""
    return {
        "type": "function",
        "function": {
            "name": definition.name,
            "description": definition.description,
            "parameters": definition.parameters,
        },
    }


def anthropic_tool(definition: ToolDef) -> dict[str, Any]:
    """The Anthropic Messages API tool form."""
    return {
        "name": definition.name,
        "description": definition.description,
        "input_schema": definition.parameters,
    }
