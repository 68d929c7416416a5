"""The tool-call fallback chain (seed 001 ``bc_tool_parser``, ADR-005).

Applied in order, stopping at the first step that finds anything:

1. **native** — the provider returned structured ``tool_calls``: used as they are (an empty
   id is filled in).
2. **xml** — ``<tool_call>``, ``<toolcall>`` or ``<invoke>`` elements holding either
   ``<name>`` + ``<args>`` (or ``<arguments>``) children, a JSON object with
   ``name``/``tool`` + ``arguments``/``args``, or ``<invoke name="x">`` with
   ``<parameter name="k">v</parameter>`` children.
3. **markdown** — fenced ```` ```json ```` blocks whose object has ``tool``/``name`` and
   ``args``/``arguments``.
4. **none** — no calls.

Security rule: only structured delimiters are matched; JSON in free text is never treated
as a call (false negatives are preferred over hallucinated calls). XML inside a fenced code
block is an example, not a call. Arguments that are not a JSON object are kept in
``ToolCall.raw_args`` with empty ``args`` so the loop can answer with a clear tool error.
Ids come from an :data:`~beamclaw_core.parsing.ids.IdFactory`, so the result is a pure
function of the input. The markup of parsed calls is removed from :attr:`ParsedToolCalls.text`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from beamclaw_core.parsing.code_regions import find_code_regions, inside_code
from beamclaw_core.parsing.ids import IdFactory, canonical_args, default_id_factory
from beamclaw_tools import ToolCall

ParseSource = Literal["native", "xml", "markdown", "none"]

_XML_BLOCK = re.compile(
    r"<(tool_call|toolcall|invoke)\b([^>]*)>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL
)
_ATTR_NAME = re.compile(r"""\bname\s*=\s*["']([^"']+)["']""")
_CHILD = re.compile(r"<(name|args|arguments)\s*>(.*?)</\1\s*>", re.IGNORECASE | re.DOTALL)
_PARAM = re.compile(
    r"""<parameter\s+name\s*=\s*["']([^"']+)["']\s*>(.*?)</parameter\s*>""",
    re.IGNORECASE | re.DOTALL,
)
_FENCE_JSON = re.compile(r"```[ \t]*json[ \t]*\n(.*?)\n?[ \t]*```", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True, slots=True)
class ParsedToolCalls:
    """What the chain found.

    Attributes:
        calls: the tool calls, in the order the model wrote them.
        source: which step of the chain produced them.
        text: the input text with the parsed markup removed (stripped).
    """

    calls: tuple[ToolCall, ...]
    source: ParseSource
    text: str


@dataclass(frozen=True, slots=True)
class _Found:
    name: str
    args: dict[str, Any]
    raw_args: str | None


def _decode_args(raw: str | dict[str, Any] | None) -> tuple[dict[str, Any], str | None]:
    if raw is None:
        return {}, None
    if isinstance(raw, dict):
        return raw, None
    stripped = raw.strip()
    if not stripped:
        return {}, None
    try:
        value = json.loads(stripped)
    except ValueError:
        return {}, raw
    if isinstance(value, dict):
        return dict(value), None  # pyright: ignore[reportUnknownArgumentType]
    return {}, raw


def _from_json_object(obj: Any) -> _Found | None:
    if not isinstance(obj, dict):
        return None
    data: dict[str, Any] = dict(obj)  # pyright: ignore[reportUnknownArgumentType]
    name = data.get("tool", data.get("name"))
    if not isinstance(name, str) or not name.strip():
        return None
    if "args" in data:
        raw = data["args"]
    elif "arguments" in data:
        raw = data["arguments"]
    else:
        return None
    if isinstance(raw, dict):
        return _Found(name.strip(), dict(raw), None)  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(raw, str):
        args, bad = _decode_args(raw)
        return _Found(name.strip(), args, bad)
    return _Found(name.strip(), {}, json.dumps(raw))


def _from_xml(attrs: str, body: str) -> _Found | None:
    children = {m.group(1).lower(): m.group(2) for m in _CHILD.finditer(body)}
    if "name" in children:
        raw = children.get("args", children.get("arguments"))
        args, bad = _decode_args(raw)
        name = children["name"].strip()
        return _Found(name, args, bad) if name else None
    attr = _ATTR_NAME.search(attrs)
    if attr:
        params: dict[str, Any] = {}
        for p in _PARAM.finditer(body):
            value = p.group(2).strip()
            try:
                params[p.group(1)] = json.loads(value)
            except ValueError:
                params[p.group(1)] = value
        return _Found(attr.group(1).strip(), params, None)
    try:
        obj = json.loads(body.strip())
    except ValueError:
        return None
    return _from_json_object(obj)


def _xml_calls(text: str) -> tuple[list[_Found], str]:
    regions = find_code_regions(text)
    found: list[_Found] = []
    kept: list[str] = []
    pos = 0
    for m in _XML_BLOCK.finditer(text):
        if inside_code(m.start(), regions):
            continue
        call = _from_xml(m.group(2), m.group(3))
        if call is None:
            continue
        found.append(call)
        kept.append(text[pos : m.start()])
        pos = m.end()
    kept.append(text[pos:])
    return found, "".join(kept)


def _markdown_calls(text: str) -> tuple[list[_Found], str]:
    found: list[_Found] = []
    kept: list[str] = []
    pos = 0
    for m in _FENCE_JSON.finditer(text):
        try:
            obj = json.loads(m.group(1))
        except ValueError:
            continue
        call = _from_json_object(obj)
        if call is None:
            continue
        found.append(call)
        kept.append(text[pos : m.start()])
        pos = m.end()
    kept.append(text[pos:])
    return found, "".join(kept)


def _build(found: list[_Found], id_factory: IdFactory) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    for index, f in enumerate(found):
        arguments = f.raw_args if f.raw_args is not None else canonical_args(f.args)
        calls.append(
            ToolCall(
                id=id_factory(index, f.name, arguments),
                name=f.name,
                args=f.args,
                raw_args=f.raw_args,
            )
        )
    return tuple(calls)


def parse_tool_calls(
    text: str,
    native: Sequence[ToolCall] = (),
    *,
    id_factory: IdFactory = default_id_factory,
) -> ParsedToolCalls:
    """Run the fallback chain over an assistant reply.

    Args:
        text: the assistant message text.
        native: structured tool calls the provider returned, if any.
        id_factory: makes ids for calls that have none (deterministic by default).
    """
    if native:
        filled = tuple(
            c
            if c.id
            else c.model_copy(
                update={"id": id_factory(i, c.name, c.raw_args or canonical_args(c.args))}
            )
            for i, c in enumerate(native)
        )
        return ParsedToolCalls(filled, "native", text)
    if "<" in text:
        found, rest = _xml_calls(text)
        if found:
            return ParsedToolCalls(_build(found, id_factory), "xml", rest.strip())
    if "```" in text:
        found, rest = _markdown_calls(text)
        if found:
            return ParsedToolCalls(_build(found, id_factory), "markdown", rest.strip())
    return ParsedToolCalls((), "none", text)
