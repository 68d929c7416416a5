"""Conversation messages (seed 001 ``bc_message``) and token usage.

Frozen pydantic models: the pure loop machine holds them, the store persists them as
JSON, providers map them to and from their wire formats. Invariant kept by the loop:
every assistant ``tool_calls`` entry is answered by exactly one ``tool`` message with the
same ``tool_call_id``, in order, before the next assistant or user message.
"""

from __future__ import annotations

import enum
from typing import Any

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializationInfo,
    SerializerFunctionWrapHandler,
    field_validator,
    model_serializer,
)

from beamclaw_tools.types import ContentPart, ImagePart, TextPart, ToolCall

TOOL_IMAGES = "tool_images"
"""``meta`` key of the user message that shows a block of tool results' images to the
model (its value: the tool call ids). Built per request by
:class:`~beamclaw_core.loop.history.HistoryRepair`, never stored."""


class Role(enum.StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    TOOL = "tool"


class Usage(BaseModel):
    """Tokens (and optionally cost) of one LLM call (REQ-BED-012)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0
    reasoning_tokens: int = 0
    cost_usd: float | None = None
    estimated: bool = False
    """True when the provider reported no usage and the numbers are estimates."""

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost_usd is not None or other.cost_usd is not None:
            cost = (self.cost_usd or 0.0) + (other.cost_usd or 0.0)
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
            cost_usd=cost,
            estimated=self.estimated or other.estimated,
        )


class Message(BaseModel):
    """One message of a conversation.

    ``content`` is text, or a tuple of parts: a person's message with images, or a tool
    result with the images its tool returned (text first, then the images; checked by
    :mod:`beamclaw_core.attachments`). Stored as it is: the images survive a restart.
    ``model`` records which model produced an assistant message (failover audit).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    role: Role
    content: str | tuple[ContentPart, ...] = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    name: str | None = None
    reasoning: str | None = None
    usage: Usage | None = None
    model: str | None = None
    is_error: bool = False
    """For tool messages: the tool failed (or was denied, cancelled, interrupted)."""
    meta: dict[str, Any] = Field(default_factory=dict)

    @field_validator("content", mode="before")
    @classmethod
    def _tag_parts(cls, value: Any) -> Any:
        """Parts stored without their ``type`` (``exclude_defaults`` dropped it before
        :meth:`_dump_tagged` kept it) are told apart by their fields."""
        if not isinstance(value, list):
            return value
        parts: list[Any] = value
        return [
            {**p, "type": "image" if "media_type" in p else "text"}
            if isinstance(p, dict) and "type" not in p
            else p
            for p in parts
        ]

    @model_serializer(mode="wrap")
    def _dump_tagged(
        self, handler: SerializerFunctionWrapHandler, info: SerializationInfo
    ) -> dict[str, Any]:
        """Parts keep their ``type`` whatever the dump excludes (it tells them apart)."""
        data: dict[str, Any] = handler(self)
        if not isinstance(self.content, str) and "content" in data:
            data["content"] = [p.model_dump(mode=info.mode) for p in self.content]
        return data

    @property
    def text(self) -> str:
        """The message's text (image parts omitted)."""
        if isinstance(self.content, str):
            return self.content
        return "".join(p.text for p in self.content if isinstance(p, TextPart))

    @property
    def images(self) -> tuple[ImagePart, ...]:
        if isinstance(self.content, str):
            return ()
        return tuple(p for p in self.content if isinstance(p, ImagePart))

    @property
    def shows_tool_images(self) -> bool:
        """This is the user message showing tool results' images (see :data:`TOOL_IMAGES`)."""
        return TOOL_IMAGES in self.meta

    @classmethod
    def system(cls, text: str, **kw: Any) -> Message:
        return cls(role=Role.SYSTEM, content=text, **kw)

    @classmethod
    def user(cls, content: str | tuple[ContentPart, ...], **kw: Any) -> Message:
        return cls(role=Role.USER, content=content, **kw)

    @classmethod
    def assistant(cls, text: str = "", tool_calls: tuple[ToolCall, ...] = (), **kw: Any) -> Message:
        return cls(role=Role.ASSISTANT, content=text, tool_calls=tool_calls, **kw)

    @classmethod
    def tool(
        cls,
        tool_call_id: str,
        name: str,
        content: str | tuple[ContentPart, ...],
        *,
        is_error: bool = False,
        **kw: Any,
    ) -> Message:
        return cls(
            role=Role.TOOL,
            content=content,
            tool_call_id=tool_call_id,
            name=name,
            is_error=is_error,
            **kw,
        )
