"""Version of beamclaw-gateway."""

__version__ = "0.1.0"
