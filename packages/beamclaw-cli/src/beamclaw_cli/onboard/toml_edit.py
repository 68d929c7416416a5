"""Change a few keys of a TOML document and keep every other byte (comments included).

``set_table_keys(text, table, values)`` replaces ``key = …`` lines inside ``[table]``
(adding missing keys at the end of the table, or the table at the end of the document)
and removes the keys whose value is None. Values are TOML source text: render them with
:func:`toml_string` / :func:`toml_secret`. Only single-line values are replaced; the
caller validates the result by parsing it, so a document this cannot edit safely is
refused rather than corrupted.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping

_HEADER = re.compile(r"^\s*\[\s*([^\[\]]+?)\s*\]\s*(#.*)?$")
_ANY_HEADER = re.compile(r"^\s*\[")


def toml_string(value: str) -> str:
    """A TOML basic string (JSON's escapes are TOML's)."""
    return json.dumps(value)


def toml_secret(form: str, value: str) -> str:
    """An inline table such as ``{ file = "secrets/openai_api_key" }``."""
    return f"{{ {form} = {toml_string(value)} }}"


def _normalise(header: str) -> str:
    return ".".join(part.strip().strip('"') for part in header.split("."))


def _key_line(key: str) -> re.Pattern[str]:
    return re.compile(rf"^\s*{re.escape(key)}\s*=")


def set_table_keys(text: str, table: str, values: Mapping[str, str | None]) -> str:
    """``text`` with ``values`` set (or removed, for None) in ``[table]``."""
    lines = text.splitlines()
    start = next(
        (
            i
            for i, line in enumerate(lines)
            if (m := _HEADER.match(line)) and _normalise(m[1]) == table
        ),
        None,
    )
    if start is None:
        added = [f"{k} = {v}" for k, v in values.items() if v is not None]
        if not added:
            return text
        body = "\n".join(lines).rstrip("\n")
        prefix = f"{body}\n\n" if body else ""
        return f"{prefix}[{table}]\n" + "\n".join(added) + "\n"
    end = next((i for i in range(start + 1, len(lines)) if _ANY_HEADER.match(lines[i])), len(lines))
    section = lines[start + 1 : end]
    for key, value in values.items():
        pattern = _key_line(key)
        found = next((i for i, line in enumerate(section) if pattern.match(line)), None)
        if found is not None and value is None:
            del section[found]
        elif found is not None:
            section[found] = f"{key} = {value}"
        elif value is not None:
            last = max(
                (
                    i
                    for i, line in enumerate(section)
                    if line.strip() and not line.lstrip().startswith("#")
                ),
                default=-1,
            )
            section.insert(last + 1, f"{key} = {value}")
    return "\n".join([*lines[: start + 1], *section, *lines[end:]]) + "\n"
