"""Tool protocol types shared by every layer above (seed 001 ``bc_tool`` and records).

These are the contracts between the tool registry, MCP, the sandbox and the loop:
frozen pydantic models, JSON-serialisable, equal by value.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any, Literal, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict, Field


class Autonomy(enum.StrEnum):
    """How much an agent may do without asking (ordered: read_only < supervised < full)."""

    READ_ONLY = "read_only"
    SUPERVISED = "supervised"
    FULL = "full"

    @property
    def rank(self) -> int:
        return _AUTONOMY_RANK[self]

    def allows(self, required: Autonomy) -> bool:
        """True when this level is at least ``required``."""
        return self.rank >= required.rank


_AUTONOMY_RANK = {Autonomy.READ_ONLY: 0, Autonomy.SUPERVISED: 1, Autonomy.FULL: 2}


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class TextPart(_Frozen):
    """Plain text content."""

    type: Literal["text"] = "text"
    text: str


class ImagePart(_Frozen):
    """An image, base64-encoded, with its media type (``image/png`` …)."""

    type: Literal["image"] = "image"
    media_type: str
    data: str


ContentPart = Annotated[TextPart | ImagePart, Field(discriminator="type")]


class FilePart(_Frozen):
    """A file a tool produced, for the person (never sent to a model): a document, a
    table, a sound. ``path`` is absolute, inside the agent's workspace; a channel reads
    the file when it delivers the answer (and checks its own size cap then)."""

    type: Literal["file"] = "file"
    name: str
    """The file's name as the person sees it (the last component of ``path``)."""
    media_type: str
    path: str
    size: int
    """Bytes, when the tool finished."""


class ToolDef(_Frozen):
    """A tool as the model sees it, plus the policy the loop enforces.

    ``parameters`` is a JSON Schema object. ``source`` is ``builtin``, ``mcp:<server>``,
    ``sandbox`` or ``skill``.
    """

    name: str
    description: str
    parameters: dict[str, Any] = Field(default_factory=lambda: {"type": "object", "properties": {}})
    source: str = "builtin"
    requires_approval: bool = False
    min_autonomy: Autonomy = Autonomy.READ_ONLY
    timeout_seconds: float = 60.0
    max_output_chars: int | None = None
    """Cap on the result text; ``None`` = the registry's default."""


class ToolCall(_Frozen):
    """A call the model asked for. ``args`` is the decoded JSON object.

    ``raw_args`` keeps the undecodable text when the model sent malformed JSON, so the
    loop can answer with a clear tool error instead of crashing.
    """

    id: str
    name: str
    args: dict[str, Any] = Field(default_factory=dict)
    raw_args: str | None = None
    source: str | None = None


class ToolResult(_Frozen):
    """The answer to one :class:`ToolCall`. ``content`` is what the model reads."""

    tool_call_id: str
    name: str
    content: str
    is_error: bool = False
    parts: tuple[ContentPart, ...] = ()
    """Extra non-text content (images from MCP tools); ``content`` always has the text."""
    structured: dict[str, Any] | None = None
    files: tuple[FilePart, ...] = ()
    """Files for the person (delivered with the turn's answer, never shown to a model)."""


class SessionRef(_Frozen):
    """Who is calling a tool: enough to scope paths, secrets and policy, nothing more."""

    session_id: str
    agent_id: str
    user_id: str = "local"
    channel: str | None = None
    autonomy: Autonomy = Autonomy.SUPERVISED
    workspace: Path | None = None
    """The agent's workspace directory (``$BEAMCLAW_HOME/agents/<agent_id>``)."""


class ToolOutput(_Frozen):
    """What a tool implementation returns; the registry turns it into a ToolResult."""

    content: str
    is_error: bool = False
    parts: tuple[ContentPart, ...] = ()
    structured: dict[str, Any] | None = None
    files: tuple[FilePart, ...] = ()

    @classmethod
    def ok(cls, content: str) -> ToolOutput:
        return cls(content=content)

    @classmethod
    def error(cls, content: str) -> ToolOutput:
        return cls(content=content, is_error=True)


@runtime_checkable
class Tool(Protocol):
    """A tool implementation (seed 001 ``bc_tool``)."""

    @property
    def definition(self) -> ToolDef: ...

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        """Run the tool. Expected failures are returned as ``ToolOutput.error``."""
        ...
