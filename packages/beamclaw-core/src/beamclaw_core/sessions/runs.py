"""Session addresses and queued runs."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import TypeAdapter

from beamclaw_core.messages import Message
from beamclaw_tools import ContentPart, TextPart

_PARTS: TypeAdapter[tuple[ContentPart, ...]] = TypeAdapter(tuple[ContentPart, ...])

COLLECT_HEADER = "[Messages sent while I was busy]"


@dataclass(frozen=True, slots=True)
class SessionAddress:
    """Who talks to which agent, from which channel (``tui``, ``telegram``, ``api``…).

    ``user_id`` carries the channel's prefix (``local:ann``, ``tg:12345``, ``api:bob``).
    """

    user_id: str
    agent_id: str = "default"
    channel: str | None = None


@dataclass(frozen=True, slots=True)
class PendingRun:
    """One message waiting for (or being turned into) a turn. ``id`` becomes the turn id."""

    id: str
    content: str | tuple[ContentPart, ...]
    created_at: float
    source_message_id: str | None = None
    channel: str | None = None
    queued_behind: bool = False
    """It arrived while a turn was running (collect mode debounces such runs)."""
    scheduled: bool = False
    """Sent by the scheduler (a job, a heartbeat): never merged with another run."""
    model: str | None = None
    """This run's model override (:attr:`~beamclaw_core.conversation.TurnRequest.model`)."""
    persisted: bool = True
    """It is in the stored queue. A run handed straight to an idle lane is not: its turn's
    first commit is what makes it durable (``SessionLane.submit``)."""

    @property
    def text(self) -> str:
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    def payload(self) -> dict[str, Any]:
        content: Any = (
            self.content
            if isinstance(self.content, str)
            else [p.model_dump(mode="json") for p in self.content]
        )
        return {
            "content": content,
            "source_message_id": self.source_message_id,
            "channel": self.channel,
            "queued_behind": self.queued_behind,
            "scheduled": self.scheduled,
            "model": self.model,
        }

    @classmethod
    def from_payload(cls, run_id: str, created_at: float, data: dict[str, Any]) -> PendingRun:
        raw = data.get("content", "")
        content: str | tuple[ContentPart, ...] = (
            raw if isinstance(raw, str) else _PARTS.validate_python(raw)
        )
        return cls(
            run_id,
            content,
            created_at,
            data.get("source_message_id"),
            data.get("channel"),
            bool(data.get("queued_behind", False)),
            bool(data.get("scheduled", False)),
            data.get("model"),
        )


def merge_runs(runs: list[PendingRun]) -> str | tuple[ContentPart, ...]:
    """Collect mode (seed 004 ADR-035): one turn from several messages, ``---`` between."""
    if len(runs) == 1:
        return runs[0].content
    texts = "\n---\n".join(r.text for r in runs)
    merged = f"{COLLECT_HEADER}\n{texts}"
    images = [
        p
        for r in runs
        if not isinstance(r.content, str)
        for p in r.content
        if not isinstance(p, TextPart)
    ]
    if not images:
        return merged
    return (TextPart(text=merged), *images)


SCHEDULED_META = "scheduled"
"""``meta`` key of a turn's user message sent by the scheduler (a job, a heartbeat):
short-term memory does not carry such turns."""


def turn_message(runs: list[PendingRun]) -> Message:
    """The user message of the turn ``runs`` become (the first one's id is the turn's):
    their content merged, their ids and the first one's channel and source in ``meta``
    (and ``scheduled`` when the scheduler sent it)."""
    primary = runs[0]
    meta: dict[str, Any] = {"run_ids": [r.id for r in runs], "channel": primary.channel}
    if primary.source_message_id is not None:
        meta["source_message_id"] = primary.source_message_id
    if primary.scheduled:
        meta[SCHEDULED_META] = True
    return Message.user(merge_runs(runs), meta=meta)
