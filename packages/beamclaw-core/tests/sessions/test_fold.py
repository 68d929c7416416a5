"""The one fold of a turn's events into its result."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from beamclaw_core.loop import (
    ApprovalRequested,
    ApprovalResolved,
    Cancelled,
    Dropped,
    LimitReached,
    Retrying,
    TextChunk,
    ToolFinished,
    TurnDone,
    TurnError,
    TurnEvent,
)
from beamclaw_core.messages import Usage
from beamclaw_core.sessions import TurnFold, TurnResult
from beamclaw_core.testing import png_image

S, T = "s", "t"


@pytest.mark.parametrize(
    ("terminal", "status", "message"),
    [
        (
            TurnDone(S, T, text="answer", usage=Usage(prompt_tokens=3), model="m"),
            "completed",
            "answer",
        ),
        (TurnError(S, T, kind="network", message="down"), "failed", "down"),
        (Cancelled(S, T, reason="stopped"), "cancelled", "stopped"),
        (Dropped(S, T, reason="queue full"), "dropped", "queue full"),
    ],
)
def test_the_terminal_event_decides(terminal: TurnEvent, status: str, message: str) -> None:
    fold = TurnFold(S, T)
    assert fold.feed(TextChunk(S, T, text="part")) is None
    result = fold.feed(terminal)
    assert isinstance(result, TurnResult) and result.status == status
    assert result.message == message and result.turn_id == T
    if status == "completed":
        assert result.usage.prompt_tokens == 3 and result.model == "m"
        assert result.finish_reason == "stop"
    else:
        assert result.error_kind is not None


def test_a_limit_makes_the_answer_a_length_stop_and_nothing_follows_the_end() -> None:
    fold = TurnFold(S, T)
    fold.feed(LimitReached(S, T, limit="max_tool_iterations", message="cut"))
    done = fold.feed(TurnDone(S, T, text="partial"))
    assert done is not None and done.finish_reason == "length"
    assert fold.feed(TurnError(S, T, message="late")) is done
    assert fold.end(TurnError(S, T, message="later")) is done


def test_a_lagging_reader_ends_the_fold_from_the_handle() -> None:
    fold = TurnFold(S, T)
    fold.feed(TextChunk(S, T, text="a"))
    assert fold.end(TurnDone(S, T, text="ab")).text == "ab"


def test_a_merged_run_sees_the_primary_turns_events_as_its_own() -> None:
    fold = TurnFold(S, "merged")
    fold.feed(TextChunk(S, "primary", text="x"))
    result = fold.feed(TurnDone(S, "primary", text="x"))
    assert result is not None and result.turn_id == "merged" and result.text == "x"


def test_the_awaited_approval_is_the_open_one() -> None:
    fold = TurnFold(S, T)
    fold.feed(ApprovalRequested(S, T, request_id="r1", tool="exec"))
    assert fold.awaiting is not None and fold.awaiting.request_id == "r1"
    fold.feed(ApprovalResolved(S, T, request_id="other", decision="yes"))
    assert fold.awaiting is not None
    fold.feed(ApprovalResolved(S, T, request_id="r1", decision="no"))
    assert fold.awaiting is None
    fold.feed(ApprovalRequested(S, T, request_id="r2", tool="exec"))
    fold.feed(Cancelled(S, T, reason="stop"))
    assert fold.awaiting is None


@given(
    attempts=st.lists(st.lists(st.text(min_size=1, max_size=4), max_size=5), min_size=1, max_size=4)
)
def test_the_draft_is_what_the_current_attempt_streamed(attempts: list[list[str]]) -> None:
    """Each failed attempt's text is discarded by the retry that follows it."""
    fold = TurnFold(S, T)
    for n, chunks in enumerate(attempts):
        if n:
            fold.feed(Retrying(S, T, attempt=n + 1, discard_partial=bool(attempts[n - 1])))
        for chunk in chunks:
            fold.feed(TextChunk(S, T, text=chunk))
    assert fold.draft == "".join(attempts[-1])


@pytest.mark.parametrize(
    ("terminal", "delivered"),
    [(TurnDone(S, T, text="here"), 2), (TurnError(S, T, kind="network"), 0)],
)
def test_a_completed_turn_carries_the_images_its_tools_returned(
    terminal: TurnEvent, delivered: int
) -> None:
    fold = TurnFold(S, T)
    first, second = png_image(), png_image(10)
    fold.feed(ToolFinished(S, T, call_id="a", tool="shot", images=(first,)))
    fold.feed(ToolFinished(S, T, call_id="b", tool="echo"))
    fold.feed(ToolFinished(S, T, call_id="c", tool="shot", images=(second,)))
    assert fold.end(terminal).images == (first, second)[:delivered]
