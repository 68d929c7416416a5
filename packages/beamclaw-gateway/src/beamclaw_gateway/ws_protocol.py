"""The ``/ws`` JSON protocol: client frames (validated) and server frames.

Client → server: ``auth``, ``message``, ``cancel``, ``approval``, ``subscribe``, ``ping``.
Server → client: ``authenticated``, ``session``, ``subscribed``, every core turn event (``accepted``,
``queued``, ``text``, ``tool_started``, ``tool_finished``, ``approval_requested``,
``approval_resolved``, ``retrying``, ``compacted``, ``limit_reached``, ``notice``,
``turn_done``, ``turn_error``, ``cancelled``, ``dropped``), ``error``, ``pong``.
docs/api.md is the reference; names here must not change without it.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    TypeAdapter,
    ValidationInfo,
    field_validator,
    model_validator,
)

from beamclaw_core import ImageLimits, check_images
from beamclaw_core.loop import TurnEvent
from beamclaw_tools import ContentPart, ImagePart, TextPart


class _Frame(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)


class AuthFrame(_Frame):
    type: Literal["auth"]
    token: str = Field(max_length=4096)


IMAGE_LIMITS = "image_limits"
"""Validation-context key of the :class:`~beamclaw_core.ImageLimits` frames are checked
against (``CLIENT_FRAME.validate_json(raw, context={IMAGE_LIMITS: limits})``); the
defaults when absent."""


class MessageFrame(_Frame):
    """A message: ``text``, ``attachments`` (images: ``{"type": "image", "media_type":
    "image/png", "data": "<base64>"}``) or both. Images are checked against
    ``[core.attachments]`` (:data:`IMAGE_LIMITS`): a refused one fails the frame."""

    type: Literal["message"]
    id: str | None = Field(default=None, max_length=256)
    text: str = ""
    attachments: tuple[ImagePart, ...] = ()
    agent: str | None = Field(default=None, max_length=128)
    user: str | None = Field(default=None, max_length=256)
    session_id: str | None = Field(default=None, max_length=128)
    channel: str = Field(default="ws", max_length=64)
    approval_mode: Literal["deny", "wait"] = "wait"
    """``wait``: an approval the turn raises waits for an answer from any front end;
    ``deny``: it is denied at once (a client that cannot answer)."""

    @field_validator("attachments")
    @classmethod
    def _checked(cls, value: tuple[ImagePart, ...], info: ValidationInfo) -> tuple[ImagePart, ...]:
        if not value:
            return value
        context: Any = info.context
        limits = context.get(IMAGE_LIMITS) if isinstance(context, dict) else None
        checked = check_images(value, limits if isinstance(limits, ImageLimits) else ImageLimits())
        return tuple(p for p in checked if isinstance(p, ImagePart))

    @model_validator(mode="after")
    def _not_empty(self) -> MessageFrame:
        if not self.text and not self.attachments:
            raise ValueError("a message needs text or attachments")
        return self

    @property
    def content(self) -> str | tuple[ContentPart, ...]:
        """What to send to the core: the text, or its parts with the images after it."""
        if not self.attachments:
            return self.text
        text = (TextPart(text=self.text),) if self.text else ()
        return (*text, *self.attachments)


class CancelFrame(_Frame):
    type: Literal["cancel"]
    session_id: str = Field(max_length=128)


class ApprovalFrame(_Frame):
    type: Literal["approval"]
    session_id: str = Field(max_length=128)
    request_id: str = Field(max_length=256)
    decision: Literal["yes", "no", "always"]


class SubscribeFrame(_Frame):
    type: Literal["subscribe"]
    session_id: str = Field(max_length=128)
    after_seq: int | None = Field(default=None, ge=0)
    """The ``seq`` of the last event the client saw: what followed is sent first."""


class PingFrame(_Frame):
    type: Literal["ping"]


ClientFrame = Annotated[
    AuthFrame | MessageFrame | CancelFrame | ApprovalFrame | SubscribeFrame | PingFrame,
    Field(discriminator="type"),
]
CLIENT_FRAME: TypeAdapter[ClientFrame] = TypeAdapter(ClientFrame)

# Core event types renamed on the wire so they cannot be confused with the protocol's own
# ``error`` frame (and read unambiguously as the end of a turn).
_WIRE_TYPES = {"done": "turn_done", "error": "turn_error"}


def event_frame(event: TurnEvent) -> dict[str, Any]:
    """A core event as its wire frame (``to_dict`` with the turn-end types renamed)."""
    data = event.to_dict()
    data["type"] = _WIRE_TYPES.get(data["type"], data["type"])
    return data


def error_frame(code: str, message: str, **extra: Any) -> dict[str, Any]:
    return {"type": "error", "code": code, "message": message, **extra}


def session_frame(session_id: str, agent: str) -> dict[str, Any]:
    return {"type": "session", "session_id": session_id, "agent": agent}


def subscribed_frame(session_id: str, seq: int, replayed: int) -> dict[str, Any]:
    """The subscription is open: ``replayed`` missed events follow, then live ones;
    ``seq`` is the latest event's number when it opened."""
    return {"type": "subscribed", "session_id": session_id, "seq": seq, "replayed": replayed}


AUTHENTICATED: dict[str, Any] = {"type": "authenticated"}
PONG: dict[str, Any] = {"type": "pong"}
