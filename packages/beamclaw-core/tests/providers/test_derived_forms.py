"""Per-message derived forms (wire messages, token estimates, the repaired history) are
computed once and equal what a fresh computation gives, for any history."""

from __future__ import annotations

import gc
import json

import orjson
from hypothesis import given, settings
from hypothesis import strategies as st

from beamclaw_core.loop.history import HistoryRepair, repair_history
from beamclaw_core.messages import Message
from beamclaw_core.providers.anthropic_wire import (
    anthropic_turn,
    anthropic_turn_memo,
    to_anthropic_messages,
)
from beamclaw_core.providers.memo import MessageMemo
from beamclaw_core.providers.openai_wire import openai_message_memo, to_openai_message
from beamclaw_core.providers.tokens import (
    count_message_tokens,
    estimate_message_tokens,
    estimate_prompt_tokens,
    message_tokens_memo,
)
from beamclaw_tools import ImagePart, TextPart, ToolCall

_ids = st.sampled_from(["c1", "c2", "c3", "c4"])
_text = st.text(max_size=12)
_calls = st.lists(
    st.builds(
        ToolCall,
        id=_ids,
        name=st.sampled_from(["echo", "read"]),
        args=st.dictionaries(st.sampled_from(["a", "b"]), st.integers(), max_size=2),
        raw_args=st.none() | st.just('{"a": '),
    ),
    max_size=3,
).map(tuple)
_message = st.one_of(
    st.builds(Message.system, _text),
    st.builds(Message.user, _text),
    st.builds(
        Message.user,
        st.tuples(
            st.builds(TextPart, text=_text),
            st.builds(ImagePart, media_type=st.just("image/png"), data=st.just("AAAA")),
        ),
    ),
    st.builds(
        Message.assistant,
        _text,
        _calls,
        reasoning=st.none() | _text,
        meta=st.just({}) | st.just({"reasoning_signature": "sig"}),
    ),
    st.builds(Message.tool, _ids, st.sampled_from(["echo", "read"]), _text, is_error=st.booleans()),
)
_histories = st.lists(_message, max_size=14)


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=False)


@settings(max_examples=150, deadline=None)
@given(_histories)
def test_memoised_forms_equal_fresh_ones_byte_for_byte(history: list[Message]) -> None:
    fresh = orjson.dumps({"messages": [to_openai_message(m) for m in history]})
    for _ in range(2):  # the second pass is served from the memos
        assert orjson.dumps({"messages": [openai_message_memo(m) for m in history]}) == fresh
        for cut in (len(history) // 2, len(history), 0):  # extending, then not
            assert orjson.dumps(openai_message_memo.many(history[:cut])) == orjson.dumps(
                [to_openai_message(m) for m in history[:cut]]
            )
        assert _dumps(to_anthropic_messages(history)) == _dumps(
            to_anthropic_messages(history, turn_of=anthropic_turn)
        )
        assert [estimate_message_tokens(m) for m in history] == [
            count_message_tokens(m) for m in history
        ]
        assert estimate_prompt_tokens(history) == sum(count_message_tokens(m) for m in history)
    # building a request never alters the shared forms it was built from
    assert [anthropic_turn_memo(m) for m in history] == [anthropic_turn(m) for m in history]


@settings(max_examples=150, deadline=None)
@given(_histories, st.lists(st.integers(min_value=0, max_value=14), max_size=4))
def test_incremental_repair_equals_repairing_everything(
    history: list[Message], cuts: list[int]
) -> None:
    repair = HistoryRepair()
    start = 0
    for cut in sorted(min(c, len(history)) for c in cuts):
        got = repair.feed(history[start:cut]).result()
        start = cut
        assert [m.model_dump() for m in got] == [
            m.model_dump() for m in repair_history(history[:cut])
        ]
    got = repair.feed(history[start:]).result()
    assert [m.model_dump() for m in got] == [m.model_dump() for m in repair_history(history)]
    assert repair.fed == len(history)


def test_a_memo_derives_once_per_message_and_forgets_collected_ones() -> None:
    calls: list[str] = []

    def derive(message: Message) -> str:
        calls.append(message.text)
        return message.text.upper()

    memo = MessageMemo(derive)
    a, b = Message.user("a"), Message.user("a")  # equal, but distinct objects
    assert [memo(a), memo(a), memo(b)] == ["A", "A", "A"]
    assert calls == ["a", "a"]
    stats = memo.stats()
    assert (stats.derived, stats.reused, stats.size) == (2, 1, 2)
    del a, b
    gc.collect()
    assert memo.stats().size == 0


def test_the_shared_memos_count_what_they_derive() -> None:
    m = Message.user("hello")
    before = (message_tokens_memo.stats().derived, openai_message_memo.stats().derived)
    estimate_message_tokens(m)
    estimate_message_tokens(m)
    openai_message_memo(m)
    openai_message_memo(m)
    after = (message_tokens_memo.stats().derived, openai_message_memo.stats().derived)
    assert after == (before[0] + 1, before[1] + 1)
