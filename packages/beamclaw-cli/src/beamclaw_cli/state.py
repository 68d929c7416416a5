"""Process-wide CLI flags (set by the root callback)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CliState:
    debug: bool = False


cli_state = CliState()
