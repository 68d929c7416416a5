"""A draft view closed while a Bot API call is under way lets it finish: the message it
sent is handed to the final answer, not left behind as an orphan draft (a CI run of
``test_a_long_answer_is_split_in_balanced_chunks`` ended with three messages where the
answer has two: the second draft message was sent as the view closed)."""

from __future__ import annotations

import asyncio
from typing import Any

from beamclaw_core.loop import TextChunk
from beamclaw_gateway.telegram.drafts import DraftView


class _SlowBotApi:
    """A sender whose ``sendMessage`` reaches the server at once (recorded) and answers
    only when ``answer`` is set: a cancelled caller does not unsend it."""

    def __init__(self) -> None:
        self.answer = asyncio.Event()
        self.arrived: list[int] = []
        self.calling = asyncio.Event()

    async def api(self, _method: Any, *, retry: bool = True) -> None:
        return None

    async def send(self, _chat_id: int, _chunk: Any, *, reply_to: int | None = None) -> int:
        message_id = 100 + len(self.arrived)
        self.arrived.append(message_id)
        self.calling.set()
        await self.answer.wait()
        return message_id

    async def edit(self, _chat_id: int, _message_id: int, _chunk: Any) -> None:
        return None

    async def delete(self, _chat_id: int, _message_id: int) -> None:
        return None


async def test_closing_mid_send_hands_over_the_message_sent() -> None:
    api = _SlowBotApi()
    view = DraftView(api, 8, None, interval=0.0)  # type: ignore[arg-type]
    view.start()
    view.feed(TextChunk(session_id="s", turn_id="t", text="a draft worth showing"))
    await asyncio.wait_for(api.calling.wait(), 5)
    closing = asyncio.create_task(view.close())
    await asyncio.sleep(0.05)
    assert not closing.done(), "close waits for the call under way"
    api.answer.set()
    assert await asyncio.wait_for(closing, 5) == tuple(api.arrived) == (100,)
