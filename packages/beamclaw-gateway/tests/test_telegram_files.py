"""A tool's files reach the person on Telegram: a ``MEDIA:`` line naming a file that is
not an image (here in what ``read_file`` returns, through the real loop) is sent with
``sendDocument``, a sound with ``sendAudio``/``sendVoice``, after the answer's text; a
file over the cap, or gone, becomes a note saying so."""

from __future__ import annotations

from pathlib import Path

from beamclaw_core.channels import Outbound
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_gateway.fake_telegram import FakeBotApi
from beamclaw_tools import FilePart

from .telegram_support import Bench, telegram_gateway

READ = CallTool("read_file", {"path": "made.txt"}, text="Making it.")


def _workspace(bench: Bench) -> Path:
    folder = bench.gw.runtime.home / "agents" / "default"
    folder.mkdir(parents=True, exist_ok=True)
    return folder


async def test_a_tools_file_is_sent_as_a_document_after_the_answer() -> None:
    provider = ScriptedProvider([READ, Reply("Here is the report.")])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        folder = _workspace(bench)
        (folder / "report.csv").write_bytes(b"month,total\njan,3\n")
        (folder / "song.mp3").write_bytes(b"ID3" + b"\x00" * 64)
        (folder / "memo.ogg").write_bytes(b"OggS" + b"\x00" * 64)
        (folder / "made.txt").write_text("MEDIA: report.csv\nMEDIA: song.mp3\nMEDIA: memo.ogg\n")
        tg.push_message(chat_id=71, from_id=71, text="the report please")
        answer = await bench.shows(71, "Here is the report.")
        await tg.wait_for(lambda _tg: len(bench.bot_messages(71)) >= 4, 10)
        kinds = [m.kind for m in bench.bot_messages(71)]
        assert kinds[-3:] == ["document", "audio", "voice"], kinds
        document, audio, voice = bench.bot_messages(71)[-3:]
        assert document.document == b"month,total\njan,3\n"
        assert document.file_name == "report.csv"
        assert audio.file == b"ID3" + b"\x00" * 64 and voice.file == b"OggS" + b"\x00" * 64
        assert document.message_id > answer.message_id, "the text first, then the files"
        seen = provider.calls[1].messages[-1].text or ""
        assert "[file attached: report.csv]" in seen, "the model reads the note, not the file"


async def test_a_file_over_the_cap_or_gone_becomes_a_note() -> None:
    provider = ScriptedProvider([READ, Reply("Files attached.")])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg, max_file_bytes=100) as bench:
        folder = _workspace(bench)
        (folder / "big.pdf").write_bytes(b"%PDF" + b"x" * 500)
        (folder / "small.pdf").write_bytes(b"%PDF-1.4 tiny")
        (folder / "made.txt").write_text("MEDIA: big.pdf\nMEDIA: small.pdf\n")
        tg.push_message(chat_id=72, from_id=72, text="the pdfs")
        await bench.shows(72, "Files attached.")
        note = await bench.shows(72, "big.pdf was not sent")
        assert "504 bytes, over the 100 bytes limit" in note.plain_text
        await tg.wait_for(lambda _tg: any(m.kind == "document" for m in bench.bot_messages(72)), 10)
        (sent,) = [m for m in bench.bot_messages(72) if m.kind == "document"]
        assert sent.document == b"%PDF-1.4 tiny"
        gone = FilePart(
            name="gone.csv", media_type="text/csv", path=str(folder / "gone.csv"), size=3
        )
        receipt = await bench.gw.app.state.services.channels.deliver(
            "telegram", "72", Outbound("One more.", attachments=(gone,))
        )
        assert len(receipt.message_ids) == 2
        await bench.shows(72, "gone.csv was not sent: the file is no longer there.")
