"""Agent name rules.

An agent's name is also its directory name under ``$BEAMCLAW_HOME/agents/``, so the rules
keep it portable and unambiguous on every file system:

* 1 to 64 characters;
* lowercase ASCII letters, digits, ``-`` and ``_`` only (no upper case: ``Bob`` and ``bob``
  would be the same directory on macOS and Windows);
* starts with a letter or a digit (no hidden directories, no option-looking ``-x``);
* not a Windows device name (``con``, ``nul``, ``com1`` …), which no file system there
  can hold.

These rules apply when an agent is *created*. An existing directory is addressed by
the looser, path-safe rule shared with the file tools (``beamclaw_tools.validate_agent_id``:
letters, digits, ``.``, ``-``, ``_``), so a workspace made by hand is still usable.

``default`` is a valid name and is protected from deletion.
"""

from __future__ import annotations

import re

from beamclaw_core.workspace.errors import InvalidAgentNameError

DEFAULT_AGENT = "default"
"""The agent used when none is named; created on demand, never deleted."""

PROTECTED_AGENTS: frozenset[str] = frozenset({DEFAULT_AGENT})
"""Agents :func:`~beamclaw_core.workspace.delete_agent` refuses to delete."""

MAX_AGENT_NAME_LENGTH = 64

_ALLOWED = re.compile(r"[a-z0-9][a-z0-9_-]*")
_RESERVED: frozenset[str] = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)


def validate_agent_name(name: str) -> str:
    """Return ``name`` unchanged when it obeys the rules.

    Raises:
        InvalidAgentNameError: naming the first rule broken.
    """
    if not name:
        raise InvalidAgentNameError(name, "the name is empty")
    if len(name) > MAX_AGENT_NAME_LENGTH:
        raise InvalidAgentNameError(
            name, f"longer than {MAX_AGENT_NAME_LENGTH} characters ({len(name)})"
        )
    if name != name.lower() and _ALLOWED.fullmatch(name.lower()):
        raise InvalidAgentNameError(name, f"use lowercase letters ({name.lower()!r})")
    if not name[0].isascii() or not name[0].isalnum():
        raise InvalidAgentNameError(name, "must start with a lowercase letter or a digit")
    if not _ALLOWED.fullmatch(name):
        raise InvalidAgentNameError(name, "only lowercase letters, digits, '-' and '_' are allowed")
    if name in _RESERVED:
        raise InvalidAgentNameError(name, "a reserved device name on Windows")
    return name


def is_valid_agent_name(name: str) -> bool:
    """True when :func:`validate_agent_name` would accept ``name``."""
    try:
        validate_agent_name(name)
    except InvalidAgentNameError:
        return False
    return True
