"""The one image check both directions use: types by their bytes, sizes, counts, notes."""

from __future__ import annotations

import base64

import pytest

from beamclaw_core import BeamclawCoreError
from beamclaw_core.attachments import (
    AttachmentError,
    ImageLimits,
    ImageTooLargeError,
    ImageTypeError,
    TooManyImagesError,
    as_text_only,
    check_image,
    check_images,
    human_size,
    image_note,
    screen_tool_images,
)
from beamclaw_core.loop.history import repair_history
from beamclaw_core.messages import Message
from beamclaw_core.providers.tokens import IMAGE_TOKENS, count_message_tokens
from beamclaw_core.settings import AttachmentSettings, CoreSettings
from beamclaw_core.testing import png_bytes, png_image
from beamclaw_tools import ImagePart, TextPart, ToolCall

LIMITS = ImageLimits()
HEADS = {
    "image/png": png_bytes(),
    "image/jpeg": b"\xff\xd8\xff\xe0\x00\x10JFIF\x00" + b"\x00" * 20,
    "image/gif": b"GIF89a\x01\x00\x01\x00" + b"\x00" * 20,
    "image/webp": b"RIFF\x24\x00\x00\x00WEBPVP8 " + b"\x00" * 20,
}


def part(media_type: str, raw: bytes) -> ImagePart:
    return ImagePart(media_type=media_type, data=base64.b64encode(raw).decode())


@pytest.mark.parametrize("media_type", sorted(HEADS))
def test_each_accepted_type_passes_by_its_bytes(media_type: str) -> None:
    image = part(media_type, HEADS[media_type])
    assert check_image(image, LIMITS) is image


def test_common_aliases_and_wrapped_base64_are_made_canonical() -> None:
    wrapped = "\n".join(png_image(200).data[i : i + 76] for i in range(0, 400, 76))
    checked = check_image(ImagePart(media_type="image/PNG", data=wrapped), LIMITS)
    assert checked == png_image(200)
    jpeg = check_image(part("image/jpg", HEADS["image/jpeg"]), LIMITS)
    assert jpeg.media_type == "image/jpeg"


@pytest.mark.parametrize(
    ("image", "message"),
    [
        (part("image/bmp", b"BM" + b"\x00" * 30), "image/bmp is not an accepted image type"),
        (part("", png_bytes()), "an image without a media type is not an accepted"),
        (part("image/jpeg", png_bytes()), "declared as image/jpeg is a image/png image"),
        (part("image/png", b"<svg></svg>"), "declared as image/png is not an image"),
        (ImagePart(media_type="image/png", data="not base64!"), "not valid base64"),
        (ImagePart(media_type="image/png", data=""), "image is empty"),
    ],
)
def test_wrong_types_and_broken_data_are_refused_saying_why(image: ImagePart, message: str) -> None:
    with pytest.raises(ImageTypeError, match=message):
        check_image(image, LIMITS)


def test_an_image_over_the_size_limit_is_refused_before_it_is_decoded() -> None:
    limits = ImageLimits(max_bytes=1024)
    assert check_image(png_image(900), limits)
    with pytest.raises(ImageTooLargeError) as refused:
        check_image(ImagePart(media_type="image/png", data="A" * 2000), limits)
    assert (refused.value.size, refused.value.limit) == (1500, 1024)
    assert str(refused.value) == "the image/png image is 1.5 KB (1,500 bytes), over the 1 KB limit"


def test_a_message_with_too_many_images_is_refused_and_text_passes() -> None:
    limits = ImageLimits(max_per_message=1)
    assert check_images("just text", limits) == "just text"
    text = TextPart(text="see")
    assert check_images([text, png_image()], limits) == (text, png_image())
    with pytest.raises(TooManyImagesError, match="2 images in one message; at most 1"):
        check_images([text, png_image(), png_image()], limits)


def test_refusals_are_value_errors_of_the_core_tree() -> None:
    assert issubclass(AttachmentError, BeamclawCoreError)
    assert issubclass(AttachmentError, ValueError)


def test_a_tools_refused_images_become_notes_and_the_rest_stays() -> None:
    limits = ImageLimits(max_per_message=1)
    parts = (TextPart(text="extra"), part("image/bmp", b"BM"), png_image(), png_image())
    kept, notes = screen_tool_images(parts, limits, tool="shot")
    assert kept == (png_image(),)
    assert notes == (
        "extra",
        "[image from shot not shown: image/bmp is not an accepted image type "
        "(accepted: image/gif, image/jpeg, image/png, image/webp)]",
        "[image from shot not shown: at most 1 images per result]",
    )


def test_a_model_without_vision_reads_a_short_note_per_image() -> None:
    assert image_note(png_image(34 * 1024 - 100)) == (
        "[image: image/png, 34 KB \u2014 this model cannot see images]"
    )
    message = Message.user((TextPart(text="look: "), png_image()))
    assert as_text_only(message).content == (
        TextPart(text="look: "),
        TextPart(text="[image: image/png, 69 bytes \u2014 this model cannot see images]"),
    )
    plain = Message.user("no images")
    assert as_text_only(plain) is plain
    assert [human_size(n) for n in (0, 1023, 1024, 1536, 10 * 1024 + 1, 5 * 1024 * 1024)] == [
        "0 bytes",
        "1023 bytes",
        "1 KB",
        "1.5 KB",
        "10 KB",
        "5 MB",
    ]


def test_the_configured_limits_are_the_ones_checked() -> None:
    settings = CoreSettings.model_validate(
        {"attachments": {"max_image_bytes": 10, "image_types": ["image/png"]}}
    )
    limits = settings.attachments.limits()
    assert limits == ImageLimits(max_bytes=10, media_types=frozenset({"image/png"}))
    assert AttachmentSettings().limits() == ImageLimits()
    with pytest.raises(ValueError, match="image/bmp"):
        CoreSettings.model_validate({"attachments": {"image_types": ["image/bmp"]}})


def test_a_tool_image_counts_once_in_the_token_estimate() -> None:
    call = ToolCall(id="c1", name="shot")
    history = [
        Message.assistant("", (call,)),
        Message.tool("c1", "shot", (TextPart(text="done"), png_image())),
    ]
    shown = repair_history(history)
    assert shown[-1].shows_tool_images
    assert count_message_tokens(shown[-1]) < IMAGE_TOKENS < count_message_tokens(shown[1])
