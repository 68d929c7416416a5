"""stream_llm's drafts: forwarded per delta (coalesced only by time, never by size),
scrubbed without ever splitting a secret, and joined to the scrubbed answer."""

from __future__ import annotations

import asyncio

from beamclaw_core.loop.inputs import Input, LlmChunk, LlmResponse
from beamclaw_core.loop.llm_call import stream_llm
from beamclaw_core.loop.request import TurnRequestBuilder
from beamclaw_core.messages import Message
from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_obs import scrub

SECRET = "sk-ant-api03-" + "FAKEfake09" * 3


async def _drafts(text: str, chunk: int, window: float) -> tuple[list[str], Input]:
    provider = ScriptedProvider([Reply(text)], chunk_size=chunk)
    posted: list[Input] = []
    request = TurnRequestBuilder().request(then=[Message.user("hi")])
    final = await stream_llm(provider, request, coalesce_seconds=window, post=posted.append)
    await asyncio.sleep(window * 2)  # a pending window would fire now: there must be none
    return [e.text for e in posted if isinstance(e, LlmChunk)], final


async def test_window_zero_forwards_every_delta() -> None:
    text = "One two three four five six seven eight nine ten."
    drafts, final = await _drafts(text, 2, 0.0)
    # a lowercase word could begin a key ([0-9a-z]{32}-us..) until it ends, so each word
    # and each space goes out the moment it is known: never 80-character drafts
    assert drafts[:4] == ["One", " ", "two", " "]
    assert len(drafts) >= 15  # 2-char deltas: a word and the space after it may share one
    assert "".join(drafts) == text
    assert isinstance(final, LlmResponse) and final.message.text == text


async def test_a_secret_split_across_deltas_never_leaves_in_pieces() -> None:
    text = f"Your key is {SECRET} so keep it safe."
    for chunk in (1, 3, 7):
        drafts, _ = await _drafts(text, chunk, 0.0)
        assert "".join(drafts) == scrub(text) == "Your key is [REDACTED] so keep it safe."
        assert not any(d and d in SECRET for d in drafts if len(d) > 1 and d != "s")


async def test_deltas_of_one_tick_coalesce_within_the_window() -> None:
    text = "alpha beta gamma delta epsilon zeta eta theta"
    drafts, _ = await _drafts(text, 3, 0.02)
    # the scripted provider yields every delta at once: the first goes out at once,
    # the rest together when the window closes (and at the end of the stream)
    assert 1 < len(drafts) <= 3
    assert "".join(drafts) == text
