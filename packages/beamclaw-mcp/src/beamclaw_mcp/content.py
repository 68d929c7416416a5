"""``tools/call`` results → :class:`~beamclaw_tools.ToolOutput`.

* text blocks are joined with newlines; embedded text resources are included;
* images become :class:`~beamclaw_tools.ImagePart` (the text names them too), audio and
  binary resources are described in the text (models cannot read them);
* resource links are listed as ``[resource: <uri>]``;
* ``structuredContent`` becomes ``ToolOutput.structured``; when the server sent no text,
  its JSON is the text, so the model always reads something;
* ``isError`` → ``is_error``;
* the text is capped at ``max_chars`` with a marker stating how much was cut; images above
  ``max_image_bytes`` (base64 length) are dropped with a note;
* every string (text and structured values) passes :func:`beamclaw_obs.scrub_value`.
"""

from __future__ import annotations

import json
from typing import Any

import mcp.types as mt

from beamclaw_obs import scrub, scrub_value
from beamclaw_tools import ImagePart, ToolOutput

TRUNCATION_MARKER = "[... truncated: {omitted} of {total} characters omitted ...]"


_SCRUB_SLACK = 1024
"""Characters beyond the cap that are scrubbed too, so a secret straddling the cut is
redacted before it is cut (a partial secret never survives)."""


def truncate_text(text: str, max_chars: int) -> str:
    """``text`` unchanged if it fits, else its head plus a marker naming what was cut."""
    total = len(text)
    if total <= max_chars:
        return text
    omitted = total - max_chars
    return f"{text[:max_chars]}\n{TRUNCATION_MARKER.format(omitted=omitted, total=total)}"


def scrub_and_cap(text: str, max_chars: int) -> str:
    """Scrub ``text`` and cap it at ``max_chars`` (marker counts the original length)."""
    total = len(text)
    if total <= max_chars:
        return scrub(text)
    head = scrub(text[: max_chars + _SCRUB_SLACK])[:max_chars]
    marker = TRUNCATION_MARKER.format(omitted=total - len(head), total=total)
    return f"{head}\n{marker}"


def to_tool_output(
    result: mt.CallToolResult, *, max_chars: int, max_image_bytes: int
) -> ToolOutput:
    """Convert one MCP result (see the module docstring for the rules)."""
    texts: list[str] = []
    images: list[ImagePart] = []
    for block in result.content:
        if isinstance(block, mt.TextContent):
            texts.append(block.text)
        elif isinstance(block, mt.ImageContent):
            if len(block.data) > max_image_bytes:
                texts.append(
                    f"[image {block.mime_type} omitted: {len(block.data)} base64 bytes "
                    f"exceeds the {max_image_bytes} limit]"
                )
            else:
                images.append(ImagePart(media_type=block.mime_type, data=block.data))
                texts.append(f"[image: {block.mime_type}]")
        elif isinstance(block, mt.AudioContent):
            texts.append(f"[audio: {block.mime_type}, {len(block.data)} base64 bytes]")
        elif isinstance(block, mt.EmbeddedResource):
            res = block.resource
            if isinstance(res, mt.TextResourceContents):
                texts.append(res.text)
            else:
                kind = res.mime_type or "binary"
                texts.append(f"[resource {res.uri}: {kind}, {len(res.blob)} base64 bytes]")
        else:  # a resource link
            label = f" ({block.name})" if block.name else ""
            texts.append(f"[resource: {block.uri}{label}]")
    structured: dict[str, Any] | None = None
    if result.structured_content is not None:
        structured = scrub_value(dict(result.structured_content))
        if not texts:
            texts.append(json.dumps(structured, ensure_ascii=False, default=str))
    text = "\n".join(texts)
    if not text and result.is_error:
        text = "the tool reported an error without a message"
    text = scrub_and_cap(text, max_chars)
    return ToolOutput(
        content=text,
        is_error=bool(result.is_error),
        parts=tuple(images),
        structured=structured,
    )
