"""``kill -9`` of a real ``beamclaw serve`` with the Telegram channel on, then a restart:
a message received but not answered is answered once, and an answer that was in the
outbox but not accepted by Telegram is sent once, never twice. The gateway talks to the
fake Bot API and the fake OpenAI server over real HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from beamclaw_core.testing import FakeOpenAIServer, FakeReply, FakeToolCall, RecordedRequest
from beamclaw_gateway.fake_telegram import FakeBotApi, SentMessage

BEAMCLAW = Path(sys.executable).with_name("beamclaw")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _config(path: Path, llm: str, tg: FakeBotApi, port: int, interval: float) -> Path:
    path.write_text(
        f"""
[core]
default_provider = "fake"
[core.providers.fake]
kind = "openai"
base_url = "{llm}"
model = "fake-model"
[core.queue]
debounce_ms = 0
[gateway.http]
port = {port}
[gateway.channels.telegram]
enabled = true
token = "{tg.token}"
api_base_url = "{tg.base_url}"
dm_policy = "open"
poll_timeout_seconds = 1
edit_interval_seconds = {interval}
[obs]
log_level = "INFO"
""",
        encoding="utf-8",
    )
    return path


class Gateway:
    def __init__(self, tmp: Path, llm: str, tg: FakeBotApi, *, interval: float = 60) -> None:
        port = _free_port()
        self.base_url = f"http://127.0.0.1:{port}"
        self.log = tmp / "gateway.log"
        self.env = {
            **os.environ,
            "BEAMCLAW_HOME": str(tmp / "home"),
            "BEAMCLAW_CONFIG": str(_config(tmp / "beamclaw.toml", llm, tg, port, interval)),
        }
        self.proc: subprocess.Popen[bytes] | None = None

    async def start(self) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [str(BEAMCLAW), "serve"], env=self.env, stdout=out, stderr=out
            )
        deadline = time.monotonic() + 60
        async with httpx.AsyncClient(base_url=self.base_url, timeout=5) as client:
            while time.monotonic() < deadline:
                assert self.proc.poll() is None, self.log.read_text()
                try:
                    health = (await client.get("/health")).json()
                    channel = health["components"]["channels"].get("telegram", {})
                    if channel.get("state") == "polling":
                        return
                except (httpx.TransportError, ValueError, KeyError):
                    pass
                await asyncio.sleep(0.1)
        raise AssertionError("gateway not polling in time:\n" + self.log.read_text())

    def kill_9(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(30)
            finally:
                if self.proc.poll() is None:
                    self.proc.kill()


def _by_question(request: RecordedRequest) -> FakeReply:
    last = request.body["messages"][-1]["content"]
    return FakeReply("Still here." if "and now?" in str(last) else "Yes, after the restart.")


def _replies_to(tg: FakeBotApi, chat: int, message_id: int) -> int:
    return sum(
        1 for m in tg.messages(chat) if m.reply_to_message_id == message_id and not m.deleted
    )


def _answers(tg: FakeBotApi, chat: int, text: str) -> int:
    return sum(1 for m in tg.messages(chat) if not m.deleted and m.plain_text == text)


async def test_a_message_received_before_a_kill_9_is_answered_once_after_restart(
    tmp_path: Path,
) -> None:
    hold = asyncio.Event()
    async with FakeOpenAIServer([FakeReply("never sent", hold=hold)]) as llm, FakeBotApi() as tg:
        gateway = Gateway(tmp_path, llm.base_url, tg)
        try:
            await gateway.start()
            tg.push_message(chat_id=11, from_id=11, text="are you there?")
            deadline = time.monotonic() + 20
            while not llm.requests:
                assert time.monotonic() < deadline, gateway.log.read_text()
                await asyncio.sleep(0.05)
            gateway.kill_9()
            hold.set()
            llm.add(_by_question, _by_question)
            await gateway.start()
            await tg.wait_for(lambda _tg: _replies_to(tg, 11, 1) >= 1, 30)
            await asyncio.sleep(3)  # a second answer would come now
            assert _replies_to(tg, 11, 1) == 1, [m.plain_text for m in tg.messages(11)]
            reply = next(m for m in tg.messages(11) if m.reply_to_message_id == 1)
            assert reply.plain_text in (
                "Yes, after the restart.",  # the core ran the turn again
                "Sorry, I was restarted before I could answer that; please ask again.",
            )
            tg.push_message(chat_id=11, from_id=11, text="and now?")
            await tg.wait_for(lambda _tg: _answers(tg, 11, "Still here.") == 1, 30)
        finally:
            gateway.stop()


async def test_an_answer_in_the_outbox_at_a_kill_9_is_sent_once_after_restart(
    tmp_path: Path,
) -> None:
    async with FakeOpenAIServer([FakeReply("The answer.")]) as llm, FakeBotApi() as tg:
        gateway = Gateway(tmp_path, llm.base_url, tg)
        try:
            await gateway.start()
            tg.block(12)  # Telegram refuses the answer (403): it stays in the outbox
            tg.push_message(chat_id=12, from_id=12, text="question")
            await tg.wait_for(
                lambda _tg: any(c.status == 403 for c in tg.calls_of("sendMessage")), 30
            )
            gateway.kill_9()
            tg.block(12, False)
            await gateway.start()
            await tg.wait_for(lambda _tg: _answers(tg, 12, "The answer.") == 1, 30)
            await asyncio.sleep(3)
            assert _answers(tg, 12, "The answer.") == 1
            assert len(llm.requests) == 1, "the turn was not run again"
        finally:
            gateway.stop()


def _sent(tmp: Path, ref: str) -> bool:
    """The gateway's outbox row ``ref`` was sent (read from its database)."""
    with contextlib.closing(sqlite3.connect(tmp / "home" / "beamclaw.db")) as db:
        row = db.execute("SELECT state FROM telegram_outbox WHERE ref = ?", (ref,)).fetchone()
    return row is not None and row[0] == "sent"


def _prompts(tg: FakeBotApi, chat: int) -> list[SentMessage]:
    return [
        m
        for m in tg.messages(chat)
        if "Approval needed" in m.plain_text and m.reply_markup is not None and not m.deleted
    ]


@pytest.mark.timeout(300)  # two starts of a real gateway and a turn, on a busy machine
async def test_an_approval_asked_again_after_a_kill_9_has_buttons_and_a_live_draft(
    tmp_path: Path,
) -> None:
    """The recovered turn looks like a live one: its approval is asked again with inline
    buttons, and once approved the answer shows typing and a streamed draft, edited into
    the final answer (sent once, from the outbox), followed by the file a tool of the
    recovered turn named."""

    async def slowly(i: int) -> None:
        if i >= 2:  # the draft shows the first words before the rest arrive
            await asyncio.sleep(0.6)

    write = FakeToolCall("write_file", {"path": "note.txt", "content": "hi"})
    show = FakeToolCall("read_file", {"path": "show.txt"})  # says ``MEDIA: note.txt``
    answer = FakeReply(tokens=("Written ", "after ", "the ", "restart."), gate=slowly)
    async with FakeOpenAIServer([FakeReply(tool_calls=(write,))]) as llm, FakeBotApi() as tg:
        gateway = Gateway(tmp_path, llm.base_url, tg, interval=0.3)
        try:
            workspace = tmp_path / "home" / "agents" / "default"
            workspace.mkdir(parents=True, exist_ok=True)
            (workspace / "show.txt").write_text("MEDIA: note.txt\n")
            await gateway.start()
            tg.push_message(chat_id=13, from_id=13, text="write a note")
            await tg.wait_for(lambda _tg: len(_prompts(tg, 13)) == 1, 30)
            (before,) = _prompts(tg, 13)
            gateway.kill_9()
            llm.add(FakeReply(tool_calls=(show,)), answer)
            typing_before = len(tg.calls_of("sendChatAction"))
            await gateway.start()
            await tg.wait_for(lambda _tg: len(_prompts(tg, 13)) == 2, 30)
            again = _prompts(tg, 13)[-1]
            assert again.message_id != before.message_id and again.reply_to_message_id == 1
            assert "write_file" in again.plain_text
            await tg.wait_for(lambda _tg: len(tg.calls_of("sendChatAction")) > typing_before, 10)
            assert again.reply_markup is not None
            approve = again.reply_markup["inline_keyboard"][0][0]["callback_data"]
            tg.push_callback(13, 13, again.message_id, approve)
            await tg.wait_for(lambda _tg: _sent(tmp_path, "reply:13:1"), 30)
            final = next(m for m in tg.messages(13) if m.plain_text == "Written after the restart.")
            assert final.reply_to_message_id == 1
            assert final.edits, "a streamed draft was edited into the answer"
            assert final.sent_text != final.text
            assert (workspace / "note.txt").read_text() == "hi"
            await tg.wait_for(lambda _tg: any(m.kind == "document" for m in tg.messages(13)), 10)
            (document,) = [m for m in tg.messages(13) if m.kind == "document"]
            assert (document.file_name, document.document) == ("note.txt", b"hi")
            assert document.message_id > final.message_id, "the file follows the answer"
            await asyncio.sleep(2)  # a second answer would come now
            shown = [m.plain_text for m in tg.messages(13)]
            assert _answers(tg, 13, "Written after the restart.") == 1, shown
            assert _replies_to(tg, 13, 1) == 3, shown  # the two prompts and the answer
            assert again.plain_text == "✅ Approved: write_file", "the new prompt was settled"
        finally:
            gateway.stop()
