"""Images crossing BeamClaw's edges: one check for both directions.

Inbound (a person's image from any front end) and outbound from tools (MCP image
content, a tool's ``ToolOutput.parts``) go through :func:`check_image` against one
:class:`ImageLimits`: an accepted media type, data that is valid base64 whose bytes
start as that type's files do, at most ``max_bytes`` decoded, and at most
``max_per_message`` images in one message.

What happens to a refusal depends on the direction, never on the check:

* a front end refuses the message with the :class:`AttachmentError` (a 4xx for the
  sender: :func:`check_images`);
* a tool's image that fails is replaced by a short note the model reads
  (:func:`screen_tool_images`); the tool's text and its other images are kept.

A model that cannot see images reads :func:`image_note` in each image's place
(:func:`without_images`): never a silent drop, never the base64 as text.

Pure and synchronous (no I/O): the loop's machine uses it too.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from beamclaw_core.errors import BeamclawCoreError
from beamclaw_core.messages import Message
from beamclaw_tools.types import ContentPart, ImagePart, TextPart

IMAGE_TYPES = frozenset({"image/png", "image/jpeg", "image/gif", "image/webp"})
"""The media types every vision model BeamClaw speaks to accepts."""
DEFAULT_MAX_IMAGE_BYTES = 5 * 1024 * 1024
DEFAULT_MAX_IMAGES = 8
_WHITESPACE = ("\n", "\r", " ", "\t")
_ALIASES = {"image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg", "image/x-png": "image/png"}


class AttachmentError(BeamclawCoreError, ValueError):
    """An attachment was refused. ``str(error)`` says why, for the sender to read.

    A :class:`ValueError` too, so request validation (pydantic validators, the OpenAI
    route's 400 path) reports it as bad input without knowing this tree.
    """


class ImageTypeError(AttachmentError):
    """The media type is not accepted, or the data is not an image of that type."""

    def __init__(self, media_type: str, reason: str) -> None:
        self.media_type = media_type
        super().__init__(reason)


class ImageTooLargeError(AttachmentError):
    """The image's decoded size is over ``limit`` bytes."""

    def __init__(self, media_type: str, size: int, limit: int) -> None:
        self.media_type = media_type
        self.size = size
        self.limit = limit
        super().__init__(
            f"the {media_type} image is {human_size(size)} ({size:,} bytes), over the "
            f"{human_size(limit)} limit"
        )


class TooManyImagesError(AttachmentError):
    """More than ``limit`` images in one message."""

    def __init__(self, count: int, limit: int) -> None:
        self.count = count
        self.limit = limit
        super().__init__(f"{count} images in one message; at most {limit} are accepted")


@dataclass(frozen=True, slots=True)
class ImageLimits:
    """What :func:`check_image` accepts (``[core.attachments]``)."""

    max_bytes: int = DEFAULT_MAX_IMAGE_BYTES
    """Largest decoded image, in bytes."""
    max_per_message: int = DEFAULT_MAX_IMAGES
    media_types: frozenset[str] = IMAGE_TYPES


def human_size(size: int) -> str:
    """``34 KB``, ``5 MB``, ``512 bytes`` (1 KB = 1024 bytes; whole units, rounded up
    below 10 of them)."""
    for unit, scale in (("MB", 1024 * 1024), ("KB", 1024)):
        if size >= scale:
            value = size / scale
            return (
                f"{value:.1f} {unit}".replace(".0 ", " ") if value < 10 else f"{value:.0f} {unit}"
            )
    return f"{size} bytes"


def decoded_size(data: str) -> int:
    """The byte count ``data`` (base64, padded or not) decodes to, without decoding it."""
    length = len(data.rstrip("="))
    return length * 3 // 4


def sniffed_media_type(head: bytes) -> str | None:
    """The media type the file's first bytes announce (of the accepted ones), or None."""
    if head.startswith(b"\x89PNG\r\n\x1a\n"):
        return "image/png"
    if head.startswith(b"\xff\xd8\xff"):
        return "image/jpeg"
    if head.startswith((b"GIF87a", b"GIF89a")):
        return "image/gif"
    if head[:4] == b"RIFF" and head[8:12] == b"WEBP":
        return "image/webp"
    return None


def check_image(part: ImagePart, limits: ImageLimits) -> ImagePart:
    """``part`` when ``limits`` accept it (its media type spelled canonically).

    Raises:
        ImageTypeError: the type is not accepted, the data is not base64, or its bytes
            are not an image of the declared type.
        ImageTooLargeError: the decoded image is over ``limits.max_bytes``.
    """
    declared = part.media_type.strip().lower()
    media = _ALIASES.get(declared, declared)
    if media not in limits.media_types:
        accepted = ", ".join(sorted(limits.media_types))
        raise ImageTypeError(
            declared or "(none)",
            f"{declared or 'an image without a media type'} is not an accepted image type "
            f"(accepted: {accepted})",
        )
    data = part.data
    if any(ws in data for ws in _WHITESPACE):  # line-wrapped base64 (each test at C speed)
        data = "".join(data.split())
    size = decoded_size(data)
    if size > limits.max_bytes:  # refused before the decode spends memory on it
        raise ImageTooLargeError(media, size, limits.max_bytes)
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError) as e:
        raise ImageTypeError(media, f"the {media} image's data is not valid base64") from e
    if not raw:
        raise ImageTypeError(media, f"the {media} image is empty")
    found = sniffed_media_type(raw[:16])
    if found != media:
        what = f"a {found} image" if found else "not an image BeamClaw accepts"
        raise ImageTypeError(media, f"the data declared as {media} is {what}")
    if media == part.media_type and data is part.data:
        return part
    return ImagePart(media_type=media, data=data)


def check_images(
    content: str | Sequence[ContentPart], limits: ImageLimits
) -> str | tuple[ContentPart, ...]:
    """A front end's message content with every image checked (text parts unchanged).

    Raises:
        AttachmentError: the first refusal (:func:`check_image`), or
            :class:`TooManyImagesError` when the message holds too many images.
    """
    if isinstance(content, str):
        return content
    count = sum(1 for p in content if isinstance(p, ImagePart))
    if count > limits.max_per_message:
        raise TooManyImagesError(count, limits.max_per_message)
    return tuple(check_image(p, limits) if isinstance(p, ImagePart) else p for p in content)


def screen_tool_images(
    parts: Iterable[ContentPart], limits: ImageLimits, *, tool: str
) -> tuple[tuple[ImagePart, ...], tuple[str, ...]]:
    """``(accepted images, notes)`` of a tool's extra parts: each image that fails
    :func:`check_image`, or comes after ``limits.max_per_message`` accepted ones, is
    replaced by a note saying why; text parts become notes as they are."""
    kept: list[ImagePart] = []
    notes: list[str] = []
    for part in parts:
        if isinstance(part, TextPart):
            if part.text:
                notes.append(part.text)
            continue
        if len(kept) >= limits.max_per_message:
            notes.append(
                f"[image from {tool} not shown: at most {limits.max_per_message} images per result]"
            )
            continue
        try:
            kept.append(check_image(part, limits))
        except AttachmentError as e:
            notes.append(f"[image from {tool} not shown: {e}]")
    return tuple(kept), tuple(notes)


def image_note(part: ImagePart, reason: str = "this model cannot see images") -> str:
    """``[image: image/png, 34 KB — <reason>]``: an image's place for a reader that
    cannot have it."""
    return f"[image: {part.media_type}, {human_size(decoded_size(part.data))} \u2014 {reason}]"


def without_images(content: Sequence[ContentPart]) -> tuple[TextPart, ...]:
    """``content`` with each image replaced by its :func:`image_note`."""
    return tuple(p if isinstance(p, TextPart) else TextPart(text=image_note(p)) for p in content)


def as_text_only(message: Message) -> Message:
    """``message`` as a model that cannot see images is sent it: each image replaced by
    its :func:`image_note` (``message`` itself when it has none)."""
    if isinstance(message.content, str) or not message.images:
        return message
    return message.model_copy(update={"content": without_images(message.content)})


__all__ = [
    "DEFAULT_MAX_IMAGES",
    "DEFAULT_MAX_IMAGE_BYTES",
    "IMAGE_TYPES",
    "AttachmentError",
    "ImageLimits",
    "ImageTooLargeError",
    "ImageTypeError",
    "TooManyImagesError",
    "as_text_only",
    "check_image",
    "check_images",
    "decoded_size",
    "human_size",
    "image_note",
    "screen_tool_images",
    "without_images",
]
