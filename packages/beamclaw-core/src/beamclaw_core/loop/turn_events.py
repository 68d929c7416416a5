"""Events a client sees about a session and its turns (the public streaming contract).

Channels (TUI, Telegram, WebSocket, SSE) render these; ``to_dict`` gives their JSON wire
form with a ``type`` field. Every event names its session and, when it belongs to one,
its turn. A turn's stream always ends with exactly one *terminal* event: ``TurnDone``,
``TurnError``, ``Cancelled`` or ``Dropped``.

Every published event carries ``seq``, its number in the session's event stream
(strictly increasing; :mod:`beamclaw_core.sessions.journal`): a client that reconnects
subscribes from the last one it saw. ``seq`` is 0 on an event not yet published and takes
no part in equality (the same event, published or not, compares equal).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from beamclaw_core.loop.errors import EventDecodeError
from beamclaw_core.messages import Usage
from beamclaw_tools.types import FilePart, ImagePart


@dataclass(frozen=True, slots=True)
class TurnEvent:
    """Base of every client-facing event."""

    type: ClassVar[str] = "event"
    terminal: ClassVar[bool] = False

    session_id: str
    turn_id: str | None
    seq: int = field(default=0, kw_only=True, compare=False)
    """The event's number in its session's stream (0 until published)."""

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready form: ``{"type": ..., "session_id": ..., "turn_id": ..., ...}``."""
        data: dict[str, Any] = {"type": self.type}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Usage):
                value = value.model_dump(mode="json")
            elif isinstance(value, tuple) and value and isinstance(value[0], ImagePart | FilePart):
                value = [part.model_dump(mode="json") for part in value]
            data[f.name] = value
        return data

    @staticmethod
    def from_dict(data: Mapping[str, Any]) -> TurnEvent:
        """The event whose :meth:`to_dict` gave ``data`` (an event crossing a process:
        a ``/ws`` client, another node); fields it does not know are ignored.

        Raises:
            EventDecodeError: unknown ``type``, no ``session_id``, or a field of the wrong
                shape.
        """
        kind = data.get("type")
        cls = _EVENT_TYPES.get(kind) if isinstance(kind, str) else None
        if cls is None:
            raise EventDecodeError(f"not a turn event type: {kind!r}")
        if not isinstance(data.get("session_id"), str):
            raise EventDecodeError(f"a {kind} event without a session_id")
        values = {f.name: data[f.name] for f in dataclasses.fields(cls) if f.name in data}
        try:
            if "usage" in values:
                values["usage"] = Usage.model_validate(values["usage"])
            return cls(**values)
        except (TypeError, ValueError) as exc:
            raise EventDecodeError(f"a malformed {kind} event: {exc}") from exc


@dataclass(frozen=True, slots=True)
class Accepted(TurnEvent):
    """The message was accepted and its turn starts now."""

    type: ClassVar[str] = "accepted"


@dataclass(frozen=True, slots=True)
class Queued(TurnEvent):
    """The message waits behind a running turn; ``position`` 1 = next."""

    type: ClassVar[str] = "queued"
    position: int = 1


@dataclass(frozen=True, slots=True)
class TextChunk(TurnEvent):
    """Answer text as it streams: each delta as it arrives (``stream_coalesce_ms``), scrubbed."""

    type: ClassVar[str] = "text"
    text: str = ""


@dataclass(frozen=True, slots=True)
class ToolStarted(TurnEvent):
    type: ClassVar[str] = "tool_started"
    call_id: str = ""
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True, slots=True)
class ToolFinished(TurnEvent):
    type: ClassVar[str] = "tool_finished"
    call_id: str = ""
    tool: str = ""
    is_error: bool = False
    preview: str = ""
    """The first few hundred characters of the (scrubbed) result."""
    images: tuple[ImagePart, ...] = ()
    """The images the tool returned that reach the model (checked against
    ``[core.attachments]``): a channel delivers them with the turn's answer."""
    files: tuple[FilePart, ...] = ()
    """The files the tool produced for the person (``MEDIA:`` lines naming files that
    are not images): a channel that takes files delivers them with the turn's answer."""


@dataclass(frozen=True, slots=True)
class ApprovalRequested(TurnEvent):
    """Answer with ``answer_approval(...)`` or ``/yes``, ``/no``, ``/always``."""

    type: ClassVar[str] = "approval_requested"
    request_id: str = ""
    tool: str = ""
    args: dict[str, Any] = field(default_factory=dict)
    timeout_seconds: float = 0.0


@dataclass(frozen=True, slots=True)
class ApprovalResolved(TurnEvent):
    type: ClassVar[str] = "approval_resolved"
    request_id: str = ""
    tool: str = ""
    decision: str = ""
    """``yes``, ``no``, ``always``, ``timeout`` or ``policy`` (denied by autonomy level)."""


@dataclass(frozen=True, slots=True)
class Retrying(TurnEvent):
    """The LLM call failed with a retryable error; attempt ``attempt`` follows in ``delay``.

    ``discard_partial`` is True when the failed call had already streamed text: that
    text (every ``TextChunk`` since the last event of another type) was a draft that
    will not be part of the answer, and the retry streams its own. Renderers drop it.
    """

    type: ClassVar[str] = "retrying"
    attempt: int = 2
    delay: float = 0.0
    error_kind: str = ""
    message: str = ""
    discard_partial: bool = False


@dataclass(frozen=True, slots=True)
class Compacted(TurnEvent):
    """The LLM's view of the history was compacted (raw messages stay stored)."""

    type: ClassVar[str] = "compacted"
    before_tokens: int = 0
    after_tokens: int = 0
    summarized_messages: int = 0
    fallback: bool = False
    """True when the summary LLM failed and older messages were trimmed instead."""


@dataclass(frozen=True, slots=True)
class LimitReached(TurnEvent):
    """A bound ended the turn; ``limit`` names it, ``message`` is what the user is told."""

    type: ClassVar[str] = "limit_reached"
    limit: str = ""
    message: str = ""


@dataclass(frozen=True, slots=True)
class Notice(TurnEvent):
    """Text for the user that is not an answer: command replies, queue drops, resets."""

    type: ClassVar[str] = "notice"
    text: str = ""


@dataclass(frozen=True, slots=True)
class TurnDone(TurnEvent):
    """The turn finished; ``text`` is the whole answer (every step of the turn)."""

    type: ClassVar[str] = "done"
    terminal: ClassVar[bool] = True
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    model: str | None = None


@dataclass(frozen=True, slots=True)
class TurnError(TurnEvent):
    """The turn failed; the session is in ``Error`` until the next message."""

    type: ClassVar[str] = "error"
    terminal: ClassVar[bool] = True
    kind: str = "unknown"
    message: str = ""


@dataclass(frozen=True, slots=True)
class Cancelled(TurnEvent):
    """The turn was cancelled (``/stop``, interrupt mode, ``cancel()``)."""

    type: ClassVar[str] = "cancelled"
    terminal: ClassVar[bool] = True
    reason: str = ""


@dataclass(frozen=True, slots=True)
class Dropped(TurnEvent):
    """The queued message never ran (queue cap overflow, ``/stop``, reset)."""

    type: ClassVar[str] = "dropped"
    terminal: ClassVar[bool] = True
    reason: str = ""


@dataclass(frozen=True, slots=True)
class RunsMerged(TurnEvent):
    """Cluster mode only, between nodes, never shown to a client: the runs ``run_ids``
    became part of the turn ``turn_id`` (``collect``), so a handle waiting on one of them
    at another node ends with that turn."""

    type: ClassVar[str] = "runs_merged"
    run_ids: tuple[str, ...] = ()


def _event_types() -> dict[str, type[TurnEvent]]:
    found: dict[str, type[TurnEvent]] = {}
    pending: list[type[TurnEvent]] = [TurnEvent]
    while pending:
        for sub in pending.pop().__subclasses__():
            found[sub.type] = sub
            pending.append(sub)
    return found


_EVENT_TYPES = _event_types()
"""Every concrete event class by its wire ``type`` (what :meth:`TurnEvent.from_dict` reads)."""
