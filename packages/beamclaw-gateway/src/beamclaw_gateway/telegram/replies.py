"""What the bot says on its own (not the model): its command menu, greetings, refusals,
pairing offers."""

from __future__ import annotations

from beamclaw_gateway.telegram.pairing import PairingRequest

COMMANDS = (
    ("start", "Start talking to the agent"),
    ("new", "Start a fresh session (keeps a summary)"),
    ("reset", "Reset the session"),
    ("stop", "Stop the current turn and clear the queue"),
    ("status", "Session status"),
    ("context", "What the model currently sees"),
    ("yes", "Approve the pending tool call"),
    ("no", "Deny the pending tool call"),
    ("always", "Always allow this tool"),
)
"""The menu ``setMyCommands`` installs: ``/start`` and the loop's in-chat commands."""

GREETING = "Hi! I'm your BeamClaw agent. Send me a message to start."
REFUSED = "Sorry, this bot only talks to people its owner let in."
UNSUPPORTED = "I can't read that kind of message yet; please send text."
RESTARTED = "Sorry, I was restarted before I could answer that; please ask again."
APPROVED = "You're approved! Send me a message to start."


def pairing_offer(request: PairingRequest | None) -> str:
    """The reply to a stranger under ``dm_policy = "pairing"`` (None: no code was free)."""
    if request is None:
        return "Sorry, too many people are waiting to be let in; try again later."
    return (
        "I don't know you yet. Ask my owner to approve you with:\n\n"
        f"`beamclaw pair telegram {request.code}`\n\n(the code is valid for an hour)"
    )


def is_start(text: str) -> bool:
    """``/start`` (or ``/start@bot``, with any payload)."""
    words = text.split(maxsplit=1)
    return bool(words) and words[0].split("@")[0] == "/start"
