"""What one node tells the owner of a session (cluster mode), as plain data.

A command crosses processes as a JSON object (:meth:`Command.to_dict`,
:func:`command_from_dict`); every node hears it and only the session's owner acts on it —
but for ``wake``, which any node that can take the session's lease answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, get_args

from beamclaw_core.cluster.errors import CommandDecodeError
from beamclaw_core.loop.inputs import Decision

CommandKind = Literal["wake", "answer", "cancel", "chat"]
"""``wake``: runs were queued for the session in the database; ``answer``: an approval
answer; ``cancel``: ``/stop``; ``chat``: an in-chat command (``/new``, ``/yes``…) sent at
another node, answered under the run id ``request_id`` (so its sender's handle ends)."""

_KINDS: tuple[str, ...] = get_args(CommandKind)
_DECISIONS: tuple[str, ...] = get_args(Decision)


@dataclass(frozen=True, slots=True)
class Command:
    """One instruction for the owner of ``session_id``."""

    kind: CommandKind
    session_id: str
    request_id: str | None = None
    decision: Decision | None = None
    text: str | None = None
    """``chat``: the command as the person typed it."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "kind": self.kind,
            "session_id": self.session_id,
            "request_id": self.request_id,
            "decision": self.decision,
            "text": self.text,
        }


def command_from_dict(data: Mapping[str, Any]) -> Command:
    """The command ``data`` describes; :class:`CommandDecodeError` when it is not one."""
    kind, session_id = data.get("kind"), data.get("session_id")
    request_id, decision = data.get("request_id"), data.get("decision")
    text = data.get("text")
    if kind not in _KINDS or not isinstance(session_id, str):
        raise CommandDecodeError(f"not a cluster command: {dict(data)!r}")
    if kind == "answer" and (not isinstance(request_id, str) or decision not in _DECISIONS):
        raise CommandDecodeError(f"an answer needs a request id and a decision: {dict(data)!r}")
    if kind == "chat":
        if not isinstance(request_id, str) or not isinstance(text, str):
            raise CommandDecodeError(f"a chat command needs a run id and a text: {dict(data)!r}")
        return Command("chat", session_id, request_id, text=text)
    if kind == "wake":
        return Command("wake", session_id)
    if kind == "cancel":
        return Command("cancel", session_id)
    assert isinstance(request_id, str)
    return Command("answer", session_id, request_id, _decision(decision))


def _decision(value: object) -> Decision:
    for known in get_args(Decision):
        if value == known:
            return known
    raise CommandDecodeError(f"unknown decision {value!r}")
