"""A turn late in a long session derives wire forms and token estimates only for the
messages that are new to it, not for the whole history (issue 18, flat per-turn cost),
and does not even visit the forms of the messages its previous request sent: the
request's encoded ``messages`` array and its token total continue the previous ones
(:class:`~beamclaw_core.providers.request_fold.RequestFold`).

Counted through the memos' statistics, not timed: a turn at message ~1,000 over real
HTTP to the fake OpenAI server, with the history seeded through the store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from beamclaw_core.api import Core
from beamclaw_core.loop.states import Idle
from beamclaw_core.messages import Message
from beamclaw_core.providers import ProviderSettings, build_provider
from beamclaw_core.providers.openai_wire import openai_message_memo, openai_messages
from beamclaw_core.providers.tokens import message_tokens_memo, prompt_token_totals
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.store import ConversationStore
from beamclaw_core.testing import FakeOpenAIServer, FakeReply
from beamclaw_memory import Database
from beamclaw_tools import ToolCall

ADDR = SessionAddress("local:ann", "default", "tui")
SEEDED = 1_000


def _history(n: int) -> list[Message]:
    out: list[Message] = []
    while len(out) < n:
        i = len(out)
        call = ToolCall(id=f"c{i}", name="echo", args={"text": str(i)})
        out += [
            Message.user(f"question {i}"),
            Message.assistant("checking", (call,)),
            Message.tool(call.id, "echo", f"echo {i}"),
            Message.assistant(f"answer {i}"),
        ]
    return out


def _counts() -> tuple[int, int, int, int]:
    """Per-message forms derived (token estimates, wire forms), then messages a request's
    token total and ``messages`` array went through one by one (heads and tails)."""
    tokens, wire = prompt_token_totals.stats(), openai_messages.stats()
    return (
        message_tokens_memo.stats().derived,
        openai_message_memo.stats().derived,
        tokens.mapped,
        wire.mapped,
    )


async def _late_turn(
    make_core: Callable[..., Any], db_url: str
) -> tuple[tuple[int, int, int, int], list[Any]]:
    """The change in :func:`_counts` over a turn at message ~1,000, and what was sent."""
    providers: list[Any] = []
    async with FakeOpenAIServer([FakeReply("ok")], repeat_last=True) as server:

        def core() -> Core:
            settings = ProviderSettings(kind="openai", base_url=server.base_url, model="m")
            providers.append(build_provider("fake", settings))
            return make_core(providers[-1])

        first = core()
        await first.start(maintenance=False)
        session_id = (await first.send(ADDR, "hello")).session_id
        await first.stop()
        db = Database(db_url)
        await ConversationStore(db).commit(session_id, Idle(), _history(SEEDED), now=0.0)
        await db.dispose()

        second = core()
        await second.start(maintenance=False)
        assert await (await second.send(ADDR, "warm up")).text() == "ok"  # loads the view
        before = _counts()
        assert await (await second.send(ADDR, "late turn")).text() == "ok"
        counts = tuple(after - b for after, b in zip(_counts(), before, strict=True))
        await second.stop()
        for provider in providers:
            await provider.close()
    sent = server.bodies[-1]["messages"]
    assert len(sent) > SEEDED
    return (counts[0], counts[1], counts[2], counts[3]), sent


async def test_a_turn_at_message_1000_works_only_on_its_head_and_new_messages(
    make_core: Callable[..., Any], db_url: str
) -> None:
    (tokens, wire, totalled, encoded), sent = await _late_turn(make_core, db_url)
    # derived: the new user message and the reply, plus the system prompt when it is
    # rebuilt -- a handful, however long the history is
    assert tokens <= 6, tokens
    assert wire <= 6, wire
    # visited one by one: the system prompt (rebuilt in front of the history) and the
    # messages new since the last request; the token total is taken once or twice a turn
    system = sum(1 for m in sent if m["role"] == "system")
    assert encoded <= system + 4, (encoded, system)
    assert totalled <= 2 * (system + 4), (totalled, system)
