"""The ``[sandbox]`` configuration section."""

from __future__ import annotations

from beamclaw_obs import Section


class SandboxSettings(Section):
    """``[sandbox]``: Docker sandboxes for model-written code."""

    enabled: bool = False
    """Offer the sandboxed ``exec`` tool (needs a Docker engine)."""
