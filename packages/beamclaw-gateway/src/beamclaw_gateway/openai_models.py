"""Request and response models of the OpenAI-compatible API (``/v1``).

Requests accept (and ignore) OpenAI fields BeamClaw does not use (``temperature``,
``tools``…): the agent's configuration decides those. Responses are exact OpenAI objects.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from beamclaw_core import ImageLimits, Usage, check_images
from beamclaw_tools import ContentPart, ImagePart, TextPart

_DATA_URL = re.compile(r"^data:(?P<media>image/[\w.+-]+);base64,(?P<data>[A-Za-z0-9+/=\s]+)$")


class ImageUrl(BaseModel):
    url: str
    detail: str | None = None


class ContentPartIn(BaseModel):
    """One part of a multi-part message (``text`` or ``image_url``)."""

    model_config = ConfigDict(extra="allow")

    type: str
    text: str | None = None
    image_url: ImageUrl | None = None


class ChatMessageIn(BaseModel):
    model_config = ConfigDict(extra="allow")

    role: Literal["system", "developer", "user", "assistant", "tool", "function"]
    content: str | list[ContentPartIn] | None = None
    name: str | None = None


class StreamOptions(BaseModel):
    model_config = ConfigDict(extra="allow")

    include_usage: bool = False


class ChatCompletionRequest(BaseModel):
    """``POST /v1/chat/completions``. Only the last ``user`` message is taken: the history
    lives in the session."""

    model_config = ConfigDict(extra="allow")

    model: str = Field(description="`beamclaw/<agent>` or the agent id.")
    messages: list[ChatMessageIn] = Field(min_length=1)
    stream: bool = False
    stream_options: StreamOptions | None = None
    user: str | None = Field(default=None, max_length=256, description="End-user id.")
    session_id: str | None = Field(
        default=None,
        max_length=128,
        description="Conversation id (BeamClaw extension; also `X-Session-Id`).",
    )


def last_user_content(
    request: ChatCompletionRequest, limits: ImageLimits | None = None
) -> str | tuple[ContentPart, ...] | None:
    """The content of the last ``user`` message (None when there is none or it is empty).

    Images come as ``image_url`` parts holding base64 ``data:`` URLs and are checked
    against ``limits`` (``[core.attachments]``; the defaults when None).

    Raises:
        ValueError: an ``image_url`` that is not a base64 ``data:`` URL, or an image the
            limits refuse (an :class:`~beamclaw_core.AttachmentError`, saying why).
    """
    for message in reversed(request.messages):
        if message.role != "user":
            continue
        content = message.content
        if content is None:
            return None
        if isinstance(content, str):
            return content if content.strip() else None
        parts: list[ContentPart] = []
        for part in content:
            if part.type == "text" and part.text:
                parts.append(TextPart(text=part.text))
            elif part.type == "image_url" and part.image_url is not None:
                match = _DATA_URL.match(part.image_url.url)
                if match is None:
                    raise ValueError(
                        "image_url must be a base64 data: URL (data:image/png;base64,...); "
                        "web URLs are not fetched"
                    )
                parts.append(
                    ImagePart(media_type=match["media"], data=re.sub(r"\s", "", match["data"]))
                )
        if not parts:
            return None
        if all(isinstance(p, TextPart) for p in parts):
            return "\n".join(p.text for p in parts if isinstance(p, TextPart))
        return check_images(parts, limits or ImageLimits())
    return None


class PromptTokensDetails(BaseModel):
    cached_tokens: int = 0


class CompletionTokensDetails(BaseModel):
    reasoning_tokens: int = 0


class CompletionUsage(BaseModel):
    prompt_tokens: int
    completion_tokens: int
    total_tokens: int
    prompt_tokens_details: PromptTokensDetails | None = None
    completion_tokens_details: CompletionTokensDetails | None = None

    @staticmethod
    def body(usage: Usage) -> dict[str, Any]:
        """The JSON form of ``usage`` as this model, built directly (it is on every
        answer's path; a test checks it against the model)."""
        return {
            "prompt_tokens": usage.prompt_tokens,
            "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens or usage.prompt_tokens + usage.completion_tokens,
            "prompt_tokens_details": {"cached_tokens": usage.cached_tokens},
            "completion_tokens_details": {"reasoning_tokens": usage.reasoning_tokens},
        }


FinishReason = Literal["stop", "length", "content_filter"]


class AssistantMessage(BaseModel):
    role: Literal["assistant"] = "assistant"
    content: str | None
    refusal: str | None = None


class Choice(BaseModel):
    index: int = 0
    message: AssistantMessage
    finish_reason: FinishReason
    logprobs: None = None


class ChatCompletion(BaseModel):
    """A complete answer: the whole turn, tool steps included."""

    @staticmethod
    def body(
        id: str, created: int, model: str, text: str | None, finish: FinishReason, usage: Usage
    ) -> dict[str, Any]:
        """The model's JSON form (``model_dump(mode="json")``) built directly: every
        non-streaming answer goes through here, and a test keeps the two equal."""
        return {
            "id": id,
            "object": "chat.completion",
            "created": created,
            "model": model,
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text, "refusal": None},
                    "finish_reason": finish,
                    "logprobs": None,
                }
            ],
            "usage": CompletionUsage.body(usage),
            "system_fingerprint": None,
        }

    id: str
    object: Literal["chat.completion"] = "chat.completion"
    created: int
    model: str
    choices: list[Choice]
    usage: CompletionUsage
    system_fingerprint: str | None = None


class ChunkDelta(BaseModel):
    role: Literal["assistant"] | None = None
    content: str | None = None


class ChunkChoice(BaseModel):
    index: int = 0
    delta: ChunkDelta
    finish_reason: FinishReason | None = None
    logprobs: None = None


class ChatCompletionChunk(BaseModel):
    """One ``data:`` event of a streamed answer (documented here; sent as SSE)."""

    id: str
    object: Literal["chat.completion.chunk"] = "chat.completion.chunk"
    created: int
    model: str
    choices: list[ChunkChoice]
    usage: CompletionUsage | None = None
    system_fingerprint: str | None = None


class ModelCard(BaseModel):
    id: str
    object: Literal["model"] = "model"
    created: int
    owned_by: str = "beamclaw"
    upstream_provider: str | None = None
    """BeamClaw extension: the ``[core.providers]`` name this agent's turns go to."""
    upstream_model: str | None = None
    """BeamClaw extension: the model this agent's turns ask that provider for."""


class ModelList(BaseModel):
    object: Literal["list"] = "list"
    data: list[ModelCard]


class ErrorDetail(BaseModel):
    message: str
    type: str
    param: str | None = None
    code: str | None = None


class ErrorResponse(BaseModel):
    """The OpenAI error shape, used by every gateway-generated error."""

    error: ErrorDetail


def error_responses(*codes: int) -> dict[int | str, dict[str, Any]]:
    """OpenAPI ``responses`` entries for ``codes`` with the OpenAI error body."""
    text = {
        400: "Invalid request",
        401: "Missing or invalid gateway token",
        404: "Not found",
        409: "Conflict",
        413: "Request body too large",
        429: "Rate limit exceeded",
        502: "The upstream model failed",
        503: "Not ready",
        504: "The upstream model timed out",
    }
    return {c: {"model": ErrorResponse, "description": text.get(c, "Error")} for c in codes}
