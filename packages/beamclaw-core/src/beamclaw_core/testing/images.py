"""Real images for tests, and a tool that returns them.

:func:`png_image` builds a valid PNG file (a 1x1 pixel, padded to a chosen size with a
``tEXt`` chunk): it passes :func:`~beamclaw_core.attachments.check_image` by its bytes,
not by a header alone. :class:`ImageTool` answers every call with the parts it was given,
as an MCP tool returning image content does.
"""

from __future__ import annotations

import base64
import struct
import zlib
from typing import Any

from beamclaw_tools import ContentPart, ImagePart, SessionRef, ToolDef, ToolOutput


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png_bytes(padding: int = 0) -> bytes:
    """A 1x1 red PNG, ``padding`` bytes of text metadata larger."""
    header = struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0)
    pixels = zlib.compress(b"\x00\xff\x00\x00")
    text = _chunk(b"tEXt", b"pad\x00" + b"x" * padding) if padding else b""
    return b"".join(
        (
            b"\x89PNG\r\n\x1a\n",
            _chunk(b"IHDR", header),
            text,
            _chunk(b"IDAT", pixels),
            _chunk(b"IEND", b""),
        )
    )


def png_image(padding: int = 0) -> ImagePart:
    """:func:`png_bytes` as an :class:`ImagePart`."""
    return ImagePart(media_type="image/png", data=base64.b64encode(png_bytes(padding)).decode())


class ImageTool:
    """A tool named ``name`` answering ``text`` and ``parts`` (images) to every call."""

    def __init__(
        self, name: str = "screenshot", *, text: str = "done", parts: tuple[ContentPart, ...] = ()
    ) -> None:
        self.definition = ToolDef(name=name, description=f"{name} tool")
        self.text = text
        self.parts = parts
        self.calls = 0

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        self.calls += 1
        return ToolOutput(content=self.text, parts=self.parts)
