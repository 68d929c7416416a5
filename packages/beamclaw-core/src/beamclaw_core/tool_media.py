"""``MEDIA:`` lines: how a tool shows the model an image, or hands the person a file,
from the agent's workspace.

A tool that cannot return image content itself (a script, a skill, a shell command, an
MCP server writing a file) prints ``MEDIA: <path>`` on a line of its own. An image at
that path, inside the agent's workspace, joins the result's images, and the line
becomes ``[image attached: <path>]``. From there the image is any tool image: checked
against ``[core.attachments]``, shown to a vision model, stored with the result, delivered
to channels with the answer. Any other file (a PDF, a CSV, a sound) joins the result's
:class:`~beamclaw_tools.FilePart` list and the line becomes ``[file attached: <path>]``:
the model never reads it; channels that take files deliver it with the answer (each
with its own size cap).

Invariants: only paths inside the agent's workspace are read (the file tools' rules:
no ``..``, no symlink out); at most :data:`MAX_MEDIA_LINES` per result; a file is read only
up to ``max_bytes + 1`` bytes (a file that is not an image only up to its first 16); a
line that cannot be honoured becomes a note saying why, never an error of the tool call.
"""

from __future__ import annotations

import asyncio
import base64
import mimetypes
import re
from pathlib import Path

from beamclaw_core.attachments import sniffed_media_type
from beamclaw_tools import FilePart, ImagePart, PathOutsideRootsError, ToolResult
from beamclaw_tools.paths import WorkspaceRoots

MEDIA_LINE = re.compile(r"^MEDIA:[ \t]*(\S[^\n]*?)[ \t]*$", re.MULTILINE)
MAX_MEDIA_LINES = 8
"""``MEDIA:`` lines honoured per result; later ones become notes."""


def _read(path: Path, max_bytes: int) -> bytes:
    with path.open("rb") as f:
        return f.read(max_bytes + 1)


def file_part(path: Path) -> FilePart:
    """``path`` (an existing file) as a file for the person; its media type guessed from
    its name (``application/octet-stream`` when unknown)."""
    media_type = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    return FilePart(name=path.name, media_type=media_type, path=str(path), size=path.stat().st_size)


async def _media(raw: str, roots: WorkspaceRoots, max_bytes: int) -> ImagePart | FilePart | str:
    """The image or file at ``raw``, or why it is not attached."""
    try:
        path = roots.resolve(raw)
    except (PathOutsideRootsError, ValueError) as exc:
        return f"[image not attached: {exc}]"
    if not path.is_file():
        return f"[image not attached: no file {raw}]"
    try:
        head = await asyncio.to_thread(_read, path, 15)
        if sniffed_media_type(head) is None:
            return await asyncio.to_thread(file_part, path)
        data = await asyncio.to_thread(_read, path, max_bytes)
    except OSError as exc:
        return f"[image not attached: {raw}: {exc.strerror or exc}]"
    if len(data) > max_bytes:
        return f"[image not attached: {raw} is over the {max_bytes:,}-byte limit]"
    media_type = sniffed_media_type(data[:16]) or "application/octet-stream"
    return ImagePart(media_type=media_type, data=base64.b64encode(data).decode())


async def attach_media(result: ToolResult, roots: WorkspaceRoots, max_bytes: int) -> ToolResult:
    """``result`` with the images and files its ``MEDIA:`` lines name (see the module
    invariants)."""
    if "MEDIA:" not in result.content:
        return result
    images: list[ImagePart] = []
    files: list[FilePart] = []
    replacements: list[str] = []
    for n, match in enumerate(MEDIA_LINE.finditer(result.content)):
        raw = match.group(1)
        if n >= MAX_MEDIA_LINES:
            replacements.append(f"[image not attached: more than {MAX_MEDIA_LINES}]")
            continue
        found = await _media(raw, roots, max_bytes)
        if isinstance(found, str):
            replacements.append(found)
        elif isinstance(found, FilePart):
            files.append(found)
            replacements.append(f"[file attached: {raw}]")
        else:
            images.append(found)
            replacements.append(f"[image attached: {raw}]")
    if not replacements:
        return result
    ordered = iter(replacements)  # one per match, in the order ``sub`` meets them
    content = MEDIA_LINE.sub(lambda _m: next(ordered), result.content)
    return result.model_copy(
        update={
            "content": content,
            "parts": (*result.parts, *images),
            "files": (*result.files, *files),
        }
    )
