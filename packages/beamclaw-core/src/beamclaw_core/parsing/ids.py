"""Deterministic tool-call ids.

The loop machine is pure (DESIGN.md section 3): ids must follow from the input, never from
``uuid4``. An :data:`IdFactory` maps ``(index, name, arguments_json)`` to an id; the
default hashes those with an optional seed (the loop passes e.g. the turn id so identical
calls in different turns get different ids). Ids match ``^[A-Za-z0-9_-]+$`` (Anthropic's
rule for ``tool_use`` ids).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

IdFactory = Callable[[int, str, str], str]
"""``(index, tool_name, canonical_arguments_json) -> id``."""


def canonical_args(args: dict[str, Any]) -> str:
    """Stable JSON text of an argument object (sorted keys, no spaces)."""
    return json.dumps(args, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def make_id_factory(seed: str = "") -> IdFactory:
    """An id factory hashing ``seed``, the call's position, name and arguments."""

    def factory(index: int, name: str, arguments: str) -> str:
        digest = hashlib.sha256(f"{seed}\x00{index}\x00{name}\x00{arguments}".encode()).hexdigest()
        return f"call_{digest[:24]}"

    return factory


default_id_factory: IdFactory = make_id_factory()
