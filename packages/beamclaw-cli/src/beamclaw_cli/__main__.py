"""``python -m beamclaw_cli`` — same as the ``beamclaw`` script."""

from beamclaw_cli.app import run

run()
