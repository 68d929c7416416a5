"""Per-message derived forms (wire messages, token estimates, the repaired history) are
computed once and equal what a fresh computation gives, for any history."""

from __future__ import annotations

import gc
import json

import orjson
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from beamclaw_core.attachments import as_text_only
from beamclaw_core.loop.history import HistoryRepair, repair_history
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers.anthropic_fold import AnthropicRequests
from beamclaw_core.providers.anthropic_wire import (
    anthropic_text_turn_memo,
    anthropic_turn,
    anthropic_turn_memo,
    system_blocks,
    to_anthropic_messages,
)
from beamclaw_core.providers.memo import MessageMemo
from beamclaw_core.providers.openai_wire import (
    openai_message_memo,
    openai_messages,
    openai_text_messages,
    to_openai_message,
)
from beamclaw_core.providers.request_fold import JoinedEncodings, TokenTotals
from beamclaw_core.providers.tokens import (
    count_message_tokens,
    estimate_message_tokens,
    estimate_prompt_tokens,
    message_tokens_memo,
)
from beamclaw_core.testing import png_image
from beamclaw_tools import ImagePart, TextPart, ToolCall

_ids = st.sampled_from(["c1", "c2", "c3", "c4"])
_text = st.text(max_size=12)
_calls = st.lists(
    st.builds(
        ToolCall,
        id=_ids,
        name=st.sampled_from(["echo", "read"]),
        # (within 64 bits: the Anthropic wire sends arguments as JSON numbers, via orjson)
        args=st.dictionaries(
            st.sampled_from(["a", "b"]), st.integers(-(2**63), 2**63 - 1), max_size=2
        ),
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
    st.builds(
        Message.tool,
        _ids,
        st.just("shot"),
        st.tuples(st.builds(TextPart, text=_text), st.just(png_image())),
    ),
)
_histories = st.lists(_message, max_size=14)


def _dumps(value: object) -> str:
    return json.dumps(value, sort_keys=False)


@settings(max_examples=150, deadline=None)
@given(_histories)
def test_memoised_forms_equal_fresh_ones_byte_for_byte(history: list[Message]) -> None:
    fresh = orjson.dumps({"messages": [to_openai_message(m) for m in history]})
    for _ in range(2):  # the second pass is served from the memos
        assert b"[" + b",".join(openai_message_memo(m) for m in history) + b"]" == fresh[12:-1]
        assert orjson.dumps({"messages": openai_messages.array(history)}) == fresh
        for cut in (len(history) // 2, len(history), 0):  # extending, then not
            assert openai_message_memo.many(history[:cut]) == [
                orjson.dumps(to_openai_message(m)) for m in history[:cut]
            ]
        assert _dumps(to_anthropic_messages(history)) == _dumps(
            to_anthropic_messages(history, turn_of=anthropic_turn)
        )
        assert [estimate_message_tokens(m) for m in history] == [
            count_message_tokens(m) for m in history
        ]
        assert estimate_prompt_tokens(history) == sum(count_message_tokens(m) for m in history)
        sightless = [as_text_only(m) for m in history]
        assert orjson.dumps({"messages": openai_text_messages.array(history)}) == orjson.dumps(
            {"messages": [to_openai_message(m) for m in sightless]}
        )
        assert _dumps(to_anthropic_messages(history, turn_of=anthropic_text_turn_memo)) == _dumps(
            to_anthropic_messages(sightless, turn_of=anthropic_turn)
        )
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


class _Uncomparable(Message):
    """A message whose value comparison fails the test that reaches it."""

    def __eq__(self, other: object) -> bool:
        raise AssertionError("a memo compared messages by value")

    __hash__ = Message.__hash__


def test_mapping_a_list_compares_it_with_the_last_one_by_identity_only() -> None:
    memo = MessageMemo(lambda m: m.text)
    first = [_Uncomparable(role=Role.USER, content=t) for t in "ab"]
    assert memo.many(first) == ["a", "b"]
    # another turn's tail, as long as the last list: value equality was asked before
    other = [_Uncomparable(role=Role.USER, content=t) for t in "cd"]
    assert memo.many(other) == ["c", "d"]
    extended = [*other, _Uncomparable(role=Role.USER, content="e")]
    before = memo.stats()
    assert memo.many(extended) == ["c", "d", "e"]
    after = memo.stats()
    assert (after.derived - before.derived, after.reused - before.reused) == (1, 0)


def test_the_shared_memos_count_what_they_derive() -> None:
    m = Message.user("hello")
    before = (message_tokens_memo.stats().derived, openai_message_memo.stats().derived)
    estimate_message_tokens(m)
    estimate_message_tokens(m)
    openai_message_memo(m)
    openai_message_memo(m)
    after = (message_tokens_memo.stats().derived, openai_message_memo.stats().derived)
    assert after == (before[0] + 1, before[1] + 1)


# A request: a system prompt in front (0: none; 1, 2: rebuilt variants of one or two
# messages), then either part of one of three conversations (which, from where, to
# where: a trimmed front as a context window drops it) or any sequence of a few shared
# messages (so runs and requests share messages out of
# order, and an identity match can sit in a different stretch).
_requests = st.lists(
    st.tuples(
        st.integers(0, 2),
        st.tuples(st.integers(0, 2), st.integers(0, 3), st.integers(0, 14))
        | st.lists(st.integers(0, 5), max_size=8),
    ),
    max_size=12,
)
_heads = [[], [Message.system("soul")], [Message.system("soul"), Message.system("now")]]


@settings(max_examples=200, deadline=None)
@given(st.lists(_histories, min_size=4, max_size=4), _requests)
def test_requests_continued_from_earlier_ones_equal_fresh_ones(
    conversations: list[list[Message]],
    requests: list[tuple[int, tuple[int, int, int] | list[int]]],
) -> None:
    """Growing, shrinking, interleaved and shuffled requests with rebuilt heads, through
    folds that keep few runs and scan little: always what encoding every message gives
    (the OpenAI array, the token total, the Anthropic turns and system blocks)."""
    arrays = JoinedEncodings(openai_message_memo, keep=2, scan=3)
    totals = TokenTotals(message_tokens_memo, keep=2, scan=3)
    anthropic = AnthropicRequests(anthropic_turn_memo, keep=2, scan=3)
    shared = (conversations[3] + [Message.user(str(i)) for i in range(6)])[:6]
    for head, body in requests:
        system = [m.model_copy() for m in _heads[head]]  # rebuilt: new objects, same text
        if isinstance(body, tuple):
            request = system + conversations[body[0]][body[1] : body[2]]
        else:
            request = system + [shared[i] for i in body]
        fresh = orjson.dumps({"messages": [to_openai_message(m) for m in request]})
        assert orjson.dumps({"messages": arrays.array(request)}) == fresh
        assert totals.total(request) == sum(count_message_tokens(m) for m in request)
        assert totals.total(tuple(request)) == sum(count_message_tokens(m) for m in request)
        for cache in (True, False):
            turns, blocks = anthropic.request(request, cache=cache)
            assert orjson.dumps({"messages": turns, "system": blocks}) == orjson.dumps(
                {
                    "messages": to_anthropic_messages(request, turn_of=anthropic_turn),
                    "system": system_blocks(request, cache=cache),
                }
            )


def test_a_request_continuing_the_last_one_maps_only_its_head_and_new_messages() -> None:
    arrays = JoinedEncodings(openai_message_memo)
    history = [Message.user(f"question {i}") for i in range(100)]
    arrays.array([Message.system("prompt"), Message.system("now"), *history])
    before = arrays.stats()
    history += [Message.assistant("answer"), Message.user("next")]
    arrays.array([Message.system("prompt, rebuilt"), *history])
    after = arrays.stats()
    assert (after.mapped - before.mapped, after.reused - before.reused) == (3, 100)
    assert after.runs == 1


def test_an_anthropic_request_continuing_the_last_one_encodes_only_its_new_turns() -> None:
    requests = AnthropicRequests(anthropic_turn_memo)
    history = [m for i in range(50) for m in (Message.user(f"q {i}"), Message.assistant(f"a {i}"))]
    requests.request([Message.system("prompt"), *history], cache=True)
    before = requests.stats()
    history += [Message.user("next")]
    request = [Message.system("prompt, rebuilt"), Message.system("now"), *history]
    turns, system = requests.request(request, cache=True)
    after = requests.stats()
    assert (after.mapped - before.mapped, after.reused - before.reused) == (3, 100)
    assert orjson.loads(orjson.dumps(turns)) == to_anthropic_messages(request)
    assert system == system_blocks(request, cache=True)


def test_an_anthropic_request_whose_first_message_merged_into_a_dropped_one() -> None:
    requests = AnthropicRequests(anthropic_turn_memo)
    first, second, reply = Message.user("one"), Message.user("two"), Message.assistant("ok")
    requests.request([first, second], cache=False)  # one turn: "two" merged into "one"
    turns, _ = requests.request([second, reply], cache=False)  # continues from "two"
    assert orjson.loads(orjson.dumps(turns)) == to_anthropic_messages([second, reply])


def test_a_run_whose_growth_failed_is_dropped_not_reused_half_grown() -> None:
    def encode(message: Message) -> bytes:
        if message.text == "boom":
            raise ValueError("cannot encode")
        return orjson.dumps(to_openai_message(message))

    arrays = JoinedEncodings(MessageMemo(encode))
    history = [Message.user("a"), Message.assistant("b")]
    arrays.array(history)
    failing = [*history, Message.user("ok"), Message.user("boom")]
    with pytest.raises(ValueError, match="cannot encode"):
        arrays.array(failing)
    assert arrays.stats().runs == 0
    request = [*history, Message.user("c")]
    expected = orjson.dumps([to_openai_message(m) for m in request])
    assert orjson.dumps(arrays.array(request)) == expected


def test_a_request_after_a_tool_image_block_continues_the_one_before_it() -> None:
    """The message showing a block's images is one object from the request that ends
    with the block to every later one, so the fold continues across it."""
    call = ToolCall(id="c1", name="shot")
    history = [
        Message.user("look"),
        Message.assistant("", (call,)),
        Message.tool("c1", "shot", (TextPart(text="done"), png_image())),
    ]
    repair = HistoryRepair()
    first = repair.feed(history).result()
    assert first[-1].shows_tool_images
    assert repair.result()[-1] is first[-1]  # asked again: the same message
    arrays = JoinedEncodings(openai_message_memo)
    arrays.array([Message.system("prompt"), *first])
    before = arrays.stats()
    later = repair.feed([Message.assistant("a red pixel"), Message.user("and now?")]).result()
    assert later[3] is first[3]
    arrays.array([Message.system("prompt, rebuilt"), *later])
    after = arrays.stats()
    assert (after.mapped - before.mapped, after.reused - before.reused) == (3, 4)
