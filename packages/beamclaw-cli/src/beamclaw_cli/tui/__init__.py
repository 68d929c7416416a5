"""The terminal UI (``beamclaw tui``): one renderer over the Conversation port, embedded
or attached to a daemon.

Importing this package is cheap; Textual and the agent system load when the TUI runs.
"""

from beamclaw_cli.tui.backend import BackendChoice, choose_backend
from beamclaw_cli.tui.history import InputHistory
from beamclaw_cli.tui.transcript import Entry, StatusLine, Transcript

__all__ = [
    "BackendChoice",
    "Entry",
    "InputHistory",
    "StatusLine",
    "Transcript",
    "choose_backend",
]
