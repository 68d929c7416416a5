"""beamclaw-sandbox."""

from beamclaw_sandbox.errors import BeamclawSandboxError
from beamclaw_sandbox.settings import SandboxSettings

__version__ = "0.1.0"

__all__ = ["BeamclawSandboxError", "SandboxSettings", "__version__"]
