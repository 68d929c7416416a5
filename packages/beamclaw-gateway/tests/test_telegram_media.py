"""Media on Telegram: a photo downloaded through ``api_base_url`` reaches the model as an
image, a document lands in the workspace, voice is transcribed by an OpenAI-compatible
endpoint (or answered with a clear note when none is configured), oversized and
unsupported media are answered, not dropped."""

from __future__ import annotations

import asyncio
import base64
import struct
import zlib
from collections.abc import AsyncGenerator
from contextlib import asynccontextmanager

from aiohttp import web

from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_gateway.fake_telegram import FakeBotApi
from beamclaw_gateway.settings import TranscriptionSettings
from beamclaw_obs import Secret
from beamclaw_tools import ImagePart, TextPart

from .telegram_support import telegram_gateway


def _png(width: int = 2, height: int = 2) -> bytes:
    def chunk(kind: bytes, data: bytes) -> bytes:
        return (
            struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))
        )

    raw = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + chunk(b"IDAT", zlib.compress(raw))
        + chunk(b"IEND", b"")
    )


async def test_a_photo_reaches_the_model_as_an_image() -> None:
    provider = ScriptedProvider([Reply("a red square")])
    image = _png()
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        tg.push_photo(51, 51, image, caption="what is this?")
        await bench.shows(51, "a red square")
        assert tg.downloads, "downloaded from the fake, through api_base_url"
        content = provider.calls[0].messages[-1].content
        assert isinstance(content, tuple)
        text, picture = content
        assert isinstance(text, TextPart) and text.text == "what is this?"
        assert isinstance(picture, ImagePart) and picture.media_type == "image/png"
        assert base64.b64decode(picture.data) == image


async def test_a_document_is_saved_in_the_workspace() -> None:
    provider = ScriptedProvider([Reply("got your file")])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        tg.push_document(52, 52, b"quarterly numbers", file_name="../../report.txt")
        await bench.shows(52, "got your file")
        saved = bench.gw.runtime.home / "agents" / "default" / "telegram-files" / "report.txt"
        assert saved.read_bytes() == b"quarterly numbers"
        seen = provider.calls[0].messages[-1].text or ""
        assert "telegram-files/report.txt" in seen


async def test_oversized_and_unsupported_media_are_answered() -> None:
    provider = ScriptedProvider([])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg, max_file_bytes=8) as bench:
        tg.push_document(53, 53, b"far more than eight bytes", file_name="big.bin")
        await bench.shows(53, "too large")
        message = tg.push_message(53, 53, "placeholder")
        tg.push_update(
            {
                "message": {
                    "message_id": message["message_id"] + 1,
                    "date": message["date"],
                    "chat": message["chat"],
                    "from": message["from"],
                    "location": {"latitude": 1.0, "longitude": 2.0},
                }
            }
        )
        await bench.shows(53, "can't read that kind of message")
        async with asyncio.timeout(10):  # the placeholder's turn runs beside the replies
            while not provider.calls:
                await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)  # and nothing else follows it to the model
        assert not tg.downloads
        assert len(provider.calls) == 1  # only the placeholder text reached the model


@asynccontextmanager
async def _transcriber(text: str) -> AsyncGenerator[tuple[str, list[dict[str, object]]]]:
    seen: list[dict[str, object]] = []

    async def transcribe(request: web.Request) -> web.Response:
        form = await request.post()
        upload = form["file"]
        assert isinstance(upload, web.FileField)
        seen.append(
            {
                "model": form["model"],
                "bytes": upload.file.read(),
                "auth": request.headers.get("Authorization"),
            }
        )
        return web.json_response({"text": text})

    app = web.Application()
    app.router.add_post("/v1/audio/transcriptions", transcribe)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}/v1", seen
    finally:
        await runner.cleanup()


async def test_voice_is_transcribed_when_an_endpoint_is_configured() -> None:
    provider = ScriptedProvider([Reply("lights on")])
    async with _transcriber("turn on the lights") as (url, seen), FakeBotApi() as tg:
        transcription = TranscriptionSettings(
            base_url=url, api_key=Secret.model_validate("k-123"), model="whisper-x"
        )
        async with telegram_gateway(provider, tg, transcription=transcription) as bench:
            tg.push_voice(54, 54, b"OggS fake voice")
            await bench.shows(54, "lights on")
        assert seen == [{"model": "whisper-x", "bytes": b"OggS fake voice", "auth": "Bearer k-123"}]
        assert "turn on the lights" in (provider.calls[0].messages[-1].text or "")


async def test_voice_without_an_endpoint_gets_a_clear_reply() -> None:
    provider = ScriptedProvider([])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        tg.push_voice(55, 55, b"OggS fake voice")
        await bench.shows(55, "no transcription endpoint is configured")
        assert provider.calls == [] and not tg.downloads
