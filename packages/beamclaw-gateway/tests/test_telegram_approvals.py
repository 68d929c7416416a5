"""Approvals on Telegram: inline buttons with short callback data, ``/yes``, and a person
who never answers."""

from __future__ import annotations

from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_gateway import BeamclawConfig
from beamclaw_gateway.fake_telegram import FakeBotApi, SentMessage

from .telegram_support import Bench, telegram_gateway

WRITE = CallTool("write_file", {"path": "note.txt", "content": "hi"}, text="Let me write that.")


async def _prompt(bench: Bench, chat: int) -> SentMessage:
    prompt = await bench.shows(chat, "Approval needed")
    assert prompt.reply_markup is not None
    return prompt


def _buttons(prompt: SentMessage) -> list[str]:
    assert prompt.reply_markup is not None
    return [b["callback_data"] for row in prompt.reply_markup["inline_keyboard"] for b in row]


async def test_the_approve_button_runs_the_tool_and_the_draft_becomes_the_answer() -> None:
    provider = ScriptedProvider([WRITE, Reply("Written.")])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        tg.push_message(chat_id=31, from_id=31, text="write a note")
        prompt = await _prompt(bench, 31)
        assert "write_file" in prompt.plain_text
        data = _buttons(prompt)
        assert len(data) == 3 and all(len(d.encode()) <= 64 for d in data)
        draft = await bench.shows(31, "Let me write that.")
        tg.push_callback(31, 31, prompt.message_id, data[0])
        await tg.wait_for(lambda _tg: bool(tg.callback_answers), 10)
        assert "Approved" in (tg.callback_answers[0].text or "")
        await bench.shows(31, "✅ Approved: write_file")
        answer = await bench.shows(31, "Let me write that.\n\nWritten.")
        assert answer.message_id == draft.message_id, "the draft was edited into the answer"
        assert (bench.gw.runtime.home / "agents").exists()
        tg.push_callback(31, 31, prompt.message_id, data[1])
        await tg.wait_for(lambda _tg: len(tg.callback_answers) == 2, 10)
        assert tg.callback_answers[1].text == "Already answered.", "the first answer stands"


async def test_yes_answers_the_pending_approval() -> None:
    provider = ScriptedProvider([WRITE, Reply("Done via /yes.")])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        tg.push_message(chat_id=32, from_id=32, text="write a note")
        prompt = await _prompt(bench, 32)
        tg.push_message(chat_id=32, from_id=32, text="/yes")
        await bench.shows(32, "Approved: write_file.")
        await bench.shows(32, "Done via /yes.")
        await tg.wait_for(
            lambda _tg: prompt.reply_markup is None or "Approved" in prompt.plain_text, 10
        )


async def test_a_forged_button_is_answered_expired() -> None:
    async with FakeBotApi() as tg, telegram_gateway(ScriptedProvider([]), tg) as bench:
        tg.push_callback(33, 33, 1, "ap:nothere:y")
        await tg.wait_for(lambda _tg: bool(tg.callback_answers), 10)
        assert tg.callback_answers[0].text == "This approval has expired."
        assert bench.channel.status.updates == 1


async def test_an_approval_nobody_answers_times_out_and_says_so() -> None:
    provider = ScriptedProvider([WRITE, Reply("I could not write it.")])

    def short_wait(config: BeamclawConfig) -> None:
        config.core.agentic_loop.approval_timeout_seconds = 1

    async with FakeBotApi() as tg, telegram_gateway(provider, tg, short_wait) as bench:
        tg.push_message(chat_id=34, from_id=34, text="write a note")
        await _prompt(bench, 34)
        await bench.shows(34, "I could not write it.", timeout=20)
        await bench.shows(34, "⌛ Nobody answered in time; denied: write_file")
        tool_results = [m for m in provider.calls[1].messages if m.role.value == "tool"]
        assert tool_results and "approv" in (tool_results[0].text or "").lower()
        assert not (bench.gw.runtime.home / "agents" / "default" / "note.txt").exists()


async def test_a_queued_message_shows_a_notice_removed_when_its_turn_starts() -> None:
    provider = ScriptedProvider([WRITE, Reply("Written."), Reply("Second one.")])
    async with FakeBotApi() as tg, telegram_gateway(provider, tg) as bench:
        tg.push_message(chat_id=35, from_id=35, text="write a note")
        prompt = await _prompt(bench, 35)
        tg.push_message(chat_id=35, from_id=35, text="and then this")
        notice = await bench.shows(35, "Working on something else")
        tg.push_callback(35, 35, prompt.message_id, _buttons(prompt)[0])
        await bench.shows(35, "Second one.")
        assert notice.deleted, "the queue notice went once work on the message started"
