"""The terminal UI (``beamclaw tui``): one renderer over two chat backends.

Importing this package is cheap; Textual and the agent system load when the TUI runs.
"""

from beamclaw_cli.tui.backend import BackendChoice, ChatBackend, choose_backend
from beamclaw_cli.tui.history import InputHistory
from beamclaw_cli.tui.transcript import Entry, StatusLine, Transcript

__all__ = [
    "BackendChoice",
    "ChatBackend",
    "Entry",
    "InputHistory",
    "StatusLine",
    "Transcript",
    "choose_backend",
]
