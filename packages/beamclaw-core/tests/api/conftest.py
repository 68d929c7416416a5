"""Names the tests of this directory import: the echo tool and quiet settings."""

from __future__ import annotations

from typing import Any

from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import EchoTool, quiet_core_settings

__all__ = ["EchoTool", "make_settings"]


def make_settings(**loop: Any) -> CoreSettings:
    """Quiet ``[core]`` settings; keywords update ``[core.agentic_loop]``."""
    return quiet_core_settings(loop=loop)
