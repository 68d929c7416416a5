"""Session ids (seed 003 "Cross-channel session sharing").

``session-`` + the first 32 hex digits of SHA-256 over ``user:agent`` (``shared``) or
``user:agent:channel`` (``per_channel``). The same user talking to the same agent gets the
same conversation on every channel unless sharing is ``per_channel``.
"""

from __future__ import annotations

import getpass
import hashlib
import os
from typing import Literal

USER_ENV = "BEAMCLAW_USER"

Sharing = Literal["shared", "per_channel"]


def derive_session_id(
    user_id: str, agent_id: str, channel: str | None = None, sharing: Sharing = "shared"
) -> str:
    """The deterministic session id of ``user_id`` talking to ``agent_id``."""
    key = f"{user_id}:{agent_id}"
    if sharing == "per_channel" and channel:
        key = f"{key}:{channel}"
    return "session-" + hashlib.sha256(key.encode()).hexdigest()[:32]


def local_user_id() -> str:
    """The local (TUI/CLI) user: ``local:`` + ``$BEAMCLAW_USER``, else ``$USER``/login name."""
    name = os.environ.get(USER_ENV) or os.environ.get("USER")
    if not name:
        try:
            name = getpass.getuser()
        except OSError:
            name = "user"
    return f"local:{name}"
