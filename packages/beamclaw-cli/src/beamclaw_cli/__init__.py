"""beamclaw-cli: the ``beamclaw`` command, the composition root of BeamClaw."""

from beamclaw_cli._version import __version__
from beamclaw_cli.app import app, main
from beamclaw_cli.errors import BeamclawCliError

__all__ = ["BeamclawCliError", "__version__", "app", "main"]
