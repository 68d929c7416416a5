"""The ``[sandbox]`` configuration section."""

from __future__ import annotations

from beamclaw_obs import Section


class SandboxSettings(Section):
    """``[sandbox]``: Docker sandboxes for model-written code (not available yet)."""

    enabled: bool = False
    """Not available yet: no tool runs code in a container, so only ``false`` loads (the
    gateway refuses ``true`` until a later release adds the sandbox)."""
