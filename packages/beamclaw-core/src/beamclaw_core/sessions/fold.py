"""The one fold of a turn's events into its result, used by every front end.

A front end that answers once per turn (the OpenAI routes, webhooks, A2A, ``mcp serve``,
sub-agents) feeds the turn's events to a :class:`TurnFold` and reads a
:class:`TurnResult` when the terminal event arrives. Front ends that render as they go
(``/ws``, the TUI) render the same events and can keep a fold beside them for the
outcome.

Invariants:

* The result is decided by the terminal event alone (``TurnDone`` → ``completed``,
  ``TurnError`` → ``failed``, ``Cancelled`` → ``cancelled``, ``Dropped`` → ``dropped``);
  a ``LimitReached`` before it makes a completed answer's ``finish_reason`` ``length``.
* ``draft`` is the text streamed so far by the attempt that is still current: a
  ``Retrying`` with ``discard_partial`` drops what the failed attempt streamed, as
  renderers do, so the draft never shows text that will not be part of the answer.
* ``images`` are the images the turn's tools returned that reached the model
  (``ToolFinished.images``, in order): a completed result carries them, so a channel
  delivers them with the answer (``Outbound.attachments``); a turn that did not
  complete carries none. ``files`` likewise: the files the turn's tools produced for
  the person (``ToolFinished.files``).
* ``awaiting`` is the approval the turn waits for, if any: set by
  ``ApprovalRequested``, cleared by its ``ApprovalResolved`` and by the turn's end.
* A fold is fed one turn's events, as a :class:`~beamclaw_core.sessions.bus.TurnHandle`
  yields them (a run merged into another's turn by ``collect`` sees that turn's events,
  which name the other turn's id: they are its events all the same). The result carries
  the fold's ``turn_id``. After the terminal event the fold takes nothing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from beamclaw_core.loop.turn_events import (
    ApprovalRequested,
    ApprovalResolved,
    Cancelled,
    Dropped,
    LimitReached,
    Retrying,
    TextChunk,
    ToolFinished,
    TurnDone,
    TurnError,
    TurnEvent,
)
from beamclaw_core.messages import Usage
from beamclaw_tools import FilePart, ImagePart

TurnStatus = Literal["completed", "failed", "cancelled", "dropped"]


@dataclass(frozen=True, slots=True)
class TurnResult:
    """How a turn ended, in the terms every front end maps from."""

    session_id: str
    turn_id: str
    status: TurnStatus
    text: str = ""
    usage: Usage = field(default_factory=Usage)
    model: str | None = None
    finish_reason: Literal["stop", "length"] = "stop"
    error_kind: str | None = None
    error_message: str | None = None
    images: tuple[ImagePart, ...] = ()
    """The images the turn's tools returned (completed turns only), to deliver with
    the answer."""
    files: tuple[FilePart, ...] = ()
    """The files the turn's tools produced (completed turns only), to deliver with the
    answer."""

    @property
    def message(self) -> str:
        """What to show the person: the answer, else why there is none."""
        return self.text if self.status == "completed" else (self.error_message or "")


def result_of(
    session_id: str,
    turn_id: str,
    terminal: TurnEvent,
    *,
    length: bool = False,
    images: tuple[ImagePart, ...] = (),
    files: tuple[FilePart, ...] = (),
) -> TurnResult:
    """The result a terminal event stands for (``length``: a bound cut the answer;
    ``images``, ``files``: what the turn's tools returned, kept when it completed)."""
    if isinstance(terminal, TurnDone):
        return TurnResult(
            session_id,
            turn_id,
            "completed",
            terminal.text,
            terminal.usage,
            terminal.model,
            "length" if length else "stop",
            images=images,
            files=files,
        )
    if isinstance(terminal, TurnError):
        return TurnResult(
            session_id, turn_id, "failed", error_kind=terminal.kind, error_message=terminal.message
        )
    if isinstance(terminal, Cancelled):
        return TurnResult(
            session_id, turn_id, "cancelled", error_kind="cancelled", error_message=terminal.reason
        )
    reason = terminal.reason if isinstance(terminal, Dropped) else type(terminal).__name__
    return TurnResult(session_id, turn_id, "dropped", error_kind="dropped", error_message=reason)


class TurnFold:
    """Accumulates one turn's events (see the module invariants)."""

    def __init__(self, session_id: str, turn_id: str) -> None:
        self.session_id = session_id
        self.turn_id = turn_id
        self.length = False
        self.awaiting: ApprovalRequested | None = None
        self.result: TurnResult | None = None
        self._draft: list[str] = []
        self._images: list[ImagePart] = []
        self._files: list[FilePart] = []

    @property
    def draft(self) -> str:
        return "".join(self._draft)

    def feed(self, event: TurnEvent) -> TurnResult | None:
        """Take one event; the turn's result once ``event`` ends it, else None."""
        if self.result is not None:
            return self.result
        if isinstance(event, TextChunk):
            self._draft.append(event.text)
        elif isinstance(event, Retrying) and event.discard_partial:
            self._draft.clear()
        elif isinstance(event, LimitReached):
            self.length = True
        elif isinstance(event, ToolFinished):
            self._images.extend(event.images)
            self._files.extend(event.files)
        elif isinstance(event, ApprovalRequested):
            self.awaiting = event
        elif (
            isinstance(event, ApprovalResolved)
            and self.awaiting is not None
            and self.awaiting.request_id == event.request_id
        ):
            self.awaiting = None
        if event.terminal:
            self.awaiting = None
            self.result = result_of(
                self.session_id,
                self.turn_id,
                event,
                length=self.length,
                images=tuple(self._images),
                files=tuple(self._files),
            )
        return self.result

    def end(self, terminal: TurnEvent) -> TurnResult:
        """The result, from ``terminal`` when the events stopped short of it (a reader
        that lagged reads the terminal event from the turn handle instead)."""
        if self.result is None:
            self.feed(terminal)
        assert self.result is not None
        return self.result
