"""Collision-free, provider-safe tool names.

Providers accept tool names matching ``^[A-Za-z0-9_-]{1,64}$``. MCP tool names may be
longer or contain other characters (``.``, ``/``, spaces). :func:`safe_tool_name` maps
any name into that alphabet deterministically (a short hash suffix keeps distinct long
names distinct).

:func:`assign_names` decides the exposed name of every known MCP tool, as a pure function
of the current set of (server, tool) pairs: a tool keeps its plain (safe) name when no
other server offers a tool with the same plain name and its server is not configured to
qualify; otherwise it becomes ``<server>__<tool>``. Same input → same names, whatever
order the servers connected in.
"""

from __future__ import annotations

import hashlib
import re
from collections import Counter
from collections.abc import Iterable

MAX_TOOL_NAME = 64
SEPARATOR = "__"
_INVALID = re.compile(r"[^A-Za-z0-9_-]")


def safe_tool_name(name: str, limit: int = MAX_TOOL_NAME) -> str:
    """``name`` with invalid characters replaced by ``_`` and cut to ``limit`` characters."""
    cleaned = _INVALID.sub("_", name) or "tool"
    if len(cleaned) <= limit:
        return cleaned
    digest = hashlib.sha256(name.encode()).hexdigest()[:8]
    return f"{cleaned[: limit - 9]}_{digest}"


def qualified_tool_name(server: str, tool: str) -> str:
    """``<server>__<tool>``, provider-safe."""
    return safe_tool_name(f"{server}{SEPARATOR}{tool}")


def assign_names(
    tools: Iterable[tuple[str, str]], qualify_servers: frozenset[str] = frozenset()
) -> dict[tuple[str, str], str]:
    """Exposed name for every ``(server, tool)`` pair (see the module docstring)."""
    pairs = sorted(set(tools))
    plain = Counter(safe_tool_name(tool) for _server, tool in pairs)
    names: dict[tuple[str, str], str] = {}
    for server, tool in pairs:
        base = safe_tool_name(tool)
        if server in qualify_servers or plain[base] > 1:
            names[(server, tool)] = qualified_tool_name(server, tool)
        else:
            names[(server, tool)] = base
    return names
