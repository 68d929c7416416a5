"""TurnRequestBuilder: one builder for every request, and each request a valid history.

Histories are drawn by hypothesis — user messages, assistant tool calls, tool results
(answered, orphaned, duplicated, out of order, never answered, with images or
without), compaction summaries
whose first kept message falls anywhere (between a call and its results too) and
resets — written to a real store, whose view is the window a request is built from.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from itertools import count

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from beamclaw_core.compaction import FLUSH_INSTRUCTIONS, Compactor
from beamclaw_core.loop.history import HistoryRepair, history_problems
from beamclaw_core.loop.request import SUMMARY_PREFIX, TurnRequestBuilder
from beamclaw_core.loop.states import Idle
from beamclaw_core.messages import TOOL_IMAGES, Message, Role
from beamclaw_core.store import RESET, SUMMARY, ConversationStore, View
from beamclaw_core.subagents import SPAWN_AGENTS
from beamclaw_core.testing import EchoTool, Reply, ScriptedProvider, png_image
from beamclaw_memory import Database
from beamclaw_tools import TextPart, ToolCall

CALL_IDS = st.sampled_from(["a", "b", "c", "d"])
IMAGE = png_image()
SYSTEM = (
    Message.system("You are a test agent.", meta={"kind": "preamble"}),
    Message.system("## USER.md\n\nAnn", meta={"kind": "bootstrap"}),
)


@dataclass(frozen=True)
class Marker:
    kind: str
    summary: str | None = None
    back: int = 0
    """How many rows before the marker its first kept message is (summaries)."""


Row = Message | Marker


def assistant_calls(ids: list[str]) -> Message:
    return Message.assistant("", tool_calls=tuple(ToolCall(id=i, name="t") for i in ids))


@st.composite
def messages(draw: st.DrawFn) -> Message:
    kind = draw(
        st.sampled_from(["user", "assistant", "calls", "calls", "result", "result", "imaged"])
    )
    if kind == "user":
        return Message.user("u")
    if kind == "assistant":
        return Message.assistant("a")
    if kind == "calls":
        return assistant_calls(draw(st.lists(CALL_IDS, min_size=1, max_size=3)))
    if kind == "imaged":
        return Message.tool(draw(CALL_IDS), "t", (TextPart(text="r"), IMAGE))
    return Message.tool(draw(CALL_IDS), "t", "r")


@st.composite
def rows(draw: st.DrawFn) -> list[Row]:
    out: list[Row] = []
    for _ in range(draw(st.integers(0, 16))):
        roll = draw(st.integers(0, 9))
        if roll == 0:
            out.append(Marker(RESET))
        elif roll == 1:
            out.append(Marker(SUMMARY, draw(st.sampled_from(["", "s"])), draw(st.integers(0, 6))))
        else:
            out.append(draw(messages()))
    return out


_ids = count()


async def write(store: ConversationStore, written: list[Row]) -> str:
    """A new conversation holding ``written``; returns its id."""
    cid = f"c{next(_ids)}"
    await store.ensure(cid, agent_id="a", user_id="u", channel=None, now=1.0)
    seq = 0
    for row in written:
        if isinstance(row, Message):
            [seq] = await store.commit(cid, Idle(), [row], now=2.0)
        elif row.kind == RESET:
            seq = await store.append_marker(cid, RESET, {}, now=2.0)
        else:
            first_kept = max(1, seq + 1 - row.back)
            data = {"summary": row.summary or None, "first_kept_seq": first_kept}
            seq = await store.append_marker(cid, SUMMARY, data, now=2.0)
    return cid


def incremental_history(view: View, cuts: list[int]) -> list[Message]:
    """The view's history repaired as the executor's ViewCache does: fed in pieces."""
    repair = HistoryRepair()
    fed = 0
    for cut in sorted(c % (len(view.messages) + 1) for c in cuts):
        repair.feed(view.messages[fed:cut])
        fed = max(fed, cut)
    return repair.feed(view.messages[fed:]).result()


def assert_pairs_hold(messages: list[Message]) -> None:
    """Every assistant tool call followed by exactly its results; no result without one;
    the images of a block of results shown right after the whole block, once."""
    assert history_problems(messages) == []
    expected: list[str] = []
    block: list[Message] = []
    for i, m in enumerate(messages):
        if m.role is Role.TOOL:
            assert expected and m.tool_call_id == expected.pop(0)
            block.append(m)
            continue
        assert not expected
        imaged = [r for r in block if r.images]
        if m.shows_tool_images:
            assert imaged and m.meta[TOOL_IMAGES] == [r.tool_call_id for r in imaged]
            assert m.images == tuple(image for r in imaged for image in r.images)
        else:
            assert not imaged, f"#{i}: the images of {imaged} are not shown"
        block = []
        expected = [c.id for c in m.tool_calls]
    assert not expected
    assert not [r for r in block if r.images], "the last block's images are not shown"


@pytest.fixture
async def store(db_url: str) -> AsyncIterator[ConversationStore]:
    db = Database(db_url)
    await db.migrate()
    yield ConversationStore(db)
    await db.dispose()


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    written=rows(),
    cuts=st.lists(st.integers(0, 40), max_size=4),
    flush_rounds=st.lists(messages(), max_size=6),
)
async def test_every_request_pairs_each_tool_call_with_exactly_its_results(
    store: ConversationStore, written: list[Row], cuts: list[int], flush_rounds: list[Message]
) -> None:
    view = await store.view(await write(store, written))
    builder = TurnRequestBuilder(SYSTEM, (SPAWN_AGENTS,), model="m")

    turn = builder.request(view)
    assert turn.messages[: len(SYSTEM)] == list(SYSTEM)
    summary = [SUMMARY_PREFIX + view.summary] if view.summary else []
    assert [m.text for m in turn.messages[len(SYSTEM) : len(SYSTEM) + len(summary)]] == summary
    assert_pairs_hold(turn.messages)
    assert (turn.options.model, turn.tools) == ("m", (SPAWN_AGENTS,))
    # the executor passes the history it repairs incrementally: the same request
    assert builder.request(view, history=incremental_history(view, cuts)) == turn

    flush = builder.request(view, then=[Message.system(FLUSH_INSTRUCTIONS), *flush_rounds])
    assert flush.messages[: len(turn.messages)] == turn.messages
    assert_pairs_hold(flush.messages)

    summarise = Compactor(store, ScriptedProvider([]), model="c", clock=lambda: 0.0)
    assert_pairs_hold(summarise.summary_request(view.messages, view.summary).messages)


def test_a_builder_can_offer_a_subset_of_its_tools() -> None:
    builder = TurnRequestBuilder(SYSTEM, (EchoTool().definition, SPAWN_AGENTS), model="m")
    flush = builder.with_tools(lambda t: t.name == "echo")
    assert [t.name for t in flush.request().tools] == ["echo"]
    assert (flush.system, flush.model) == (SYSTEM, "m")


async def test_the_summary_request_is_instructions_then_the_rendered_head(
    store: ConversationStore,
) -> None:
    provider = ScriptedProvider([Reply("short")])
    compactor = Compactor(store, provider, model="small", clock=lambda: 0.0)
    head = [Message.user("hello"), Message.assistant("hi")]
    request = compactor.summary_request(head, "before")
    assert [m.role for m in request.messages] == [Role.SYSTEM, Role.USER]
    assert request.messages[1].text == "Earlier summary: before\nuser: hello\nassistant: hi"
    assert (request.options.model, request.tools) == ("small", ())
