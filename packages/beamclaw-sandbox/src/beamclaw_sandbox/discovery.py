"""The read-only ``/tools`` directory a script discovers tools in.

Layout::

    /tools/index.txt                  one line per tool: "<name> - <first line of its description>"
    /tools/<name>/description.txt     the whole description
    /tools/<name>/schema.json         the JSON Schema of its arguments
    /tools/beamclaw_bridge.py         the client module (call_tool, search_tools, get_tool_schema)

Invariants: files are replaced atomically (a script never reads half a file); a tool that
left the list loses its directory; nothing is rewritten when it did not change.
"""

from __future__ import annotations

import json
import os
import re
import shutil
from collections.abc import Iterable
from importlib.resources import files
from pathlib import Path

from beamclaw_tools import ToolDef

CLIENT_MODULE = "beamclaw_bridge.py"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]")


def tool_dirname(name: str) -> str:
    """A directory name for a tool name (path separators and leading dots replaced)."""
    return _UNSAFE.sub("_", name).lstrip(".") or "_"


def client_source() -> str:
    return (files("beamclaw_sandbox") / "container" / CLIENT_MODULE).read_text(encoding="utf-8")


def _write_if_changed(path: Path, text: str) -> None:
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.chmod(0o644)
    os.replace(tmp, path)


def write_discovery(directory: Path, tools: Iterable[ToolDef]) -> list[str]:
    """Bring ``directory`` in line with ``tools``; the tool names written."""
    directory.mkdir(parents=True, exist_ok=True)
    listed = sorted(tools, key=lambda d: d.name)
    lines: list[str] = []
    keep = {CLIENT_MODULE, "index.txt"}
    for definition in listed:
        sub = directory / tool_dirname(definition.name)
        sub.mkdir(exist_ok=True)
        sub.chmod(0o755)
        keep.add(sub.name)
        summary = (definition.description.strip().splitlines() or [""])[0]
        lines.append(f"{definition.name} - {summary}")
        _write_if_changed(sub / "description.txt", definition.description.strip() + "\n")
        schema = json.dumps(definition.parameters, indent=2, sort_keys=True) + "\n"
        _write_if_changed(sub / "schema.json", schema)
    _write_if_changed(directory / "index.txt", "\n".join(lines) + "\n")
    _write_if_changed(directory / CLIENT_MODULE, client_source())
    for entry in directory.iterdir():
        if entry.name not in keep and not entry.name.startswith("."):
            if entry.is_dir():
                shutil.rmtree(entry)
            else:
                entry.unlink()
    return [d.name for d in listed]
