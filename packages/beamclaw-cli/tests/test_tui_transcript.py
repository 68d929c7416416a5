"""The transcript fold: event dicts (core and wire names) → entries and status line."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from beamclaw_cli.tui.history import InputHistory
from beamclaw_cli.tui.transcript import StatusLine, Transcript, summarize_args
from beamclaw_core.loop.turn_events import (
    Accepted,
    ApprovalRequested,
    ApprovalResolved,
    Notice,
    Retrying,
    TextChunk,
    ToolFinished,
    ToolStarted,
    TurnDone,
)
from beamclaw_core.messages import Usage

S = "session-1"


def fold(events: list[dict[str, Any]]) -> Transcript:
    t = Transcript()
    for e in events:
        t.apply(e)
    return t


def test_core_events_fold_into_streamed_text_tools_and_approval() -> None:
    events = [
        Accepted(S, "t1"),
        TextChunk(S, "t1", text="Let me "),
        TextChunk(S, "t1", text="write it."),
        ApprovalRequested(S, "t1", request_id="r1", tool="write_file", args={"path": "a"}),
    ]
    t = fold([e.to_dict() for e in events])
    assert [e.kind for e in t.entries] == ["assistant", "approval"]
    assert t.entries[0].text == "Let me write it."
    assert t.entries[0].status == "done"  # the approval closed the streamed step
    assert t.pending_approval is not None and t.pending_approval.key == "r1"
    assert t.status.activity.startswith("approve write_file?")
    more = [
        ApprovalResolved(S, "t1", request_id="r1", tool="write_file", decision="yes"),
        ToolStarted(S, "t1", call_id="c1", tool="write_file", args={"path": "a"}),
        ToolFinished(S, "t1", call_id="c1", tool="write_file", preview="created a\n(3 bytes)"),
        TextChunk(S, "t1", text="Done."),
        TurnDone(S, "t1", text="Let me write it.Done.", usage=Usage(total_tokens=42), model="m2"),
    ]
    for e in more:
        t.apply(e.to_dict())
    kinds = [(e.kind, e.status) for e in t.entries]
    assert kinds == [
        ("assistant", "done"),
        ("approval", "yes"),
        ("tool", "ok"),
        ("assistant", "done"),
    ]
    assert t.entries[2].detail == "created a (3 bytes)"
    assert t.entries[3].text == "Done."
    assert t.pending_approval is None
    assert (t.status.tokens, t.status.model, t.status.activity) == (42, "m2", "idle")
    assert t.status.session_id == S


def test_wire_names_and_unstreamed_answers() -> None:
    t = fold(
        [
            {"type": "session", "session_id": S, "agent": "bob"},
            {"type": "accepted", "session_id": S, "turn_id": "t1"},
            {"type": "turn_done", "session_id": S, "turn_id": "t1", "text": "whole answer"},
            {
                "type": "turn_error",
                "session_id": S,
                "turn_id": "t2",
                "kind": "auth",
                "message": "bad key",
            },
            {"type": "error", "code": "unknown_agent", "message": "no agent 'x'"},
            {"type": "pong"},
            {"type": "something_new", "x": 1},
        ]
    )
    assert [(e.kind, e.text) for e in t.entries] == [
        ("assistant", "whole answer"),
        ("error", "auth: bad key"),
        ("error", "unknown_agent: no agent 'x'"),
    ]
    assert t.status.agent == "bob"


def test_command_reply_is_shown_once_as_a_notice() -> None:
    t = fold(
        [
            Notice(S, "t1", text="Session reset.").to_dict(),
            TurnDone(S, "t1", text="Session reset.").to_dict(),
        ]
    )
    assert [(e.kind, e.text) for e in t.entries] == [("notice", "Session reset.")]


def test_queue_position_and_terminal_events_clear_busy() -> None:
    t = fold(
        [
            {"type": "accepted", "turn_id": "t1"},
            {"type": "queued", "turn_id": "t2", "position": 1},
            {"type": "queued", "turn_id": "t3", "position": 2},
        ]
    )
    assert t.busy and t.status.queued == 1
    assert "queued #1" in t.status.render()
    t.apply({"type": "cancelled", "turn_id": "t1", "reason": "Cancelled by user"})
    t.apply({"type": "dropped", "turn_id": "t2", "reason": "Stopped before it ran (/stop)."})
    assert t.status.queued == 2
    t.apply({"type": "dropped", "turn_id": "t3"})
    assert not t.busy and t.status.activity == "idle"
    assert t.entries[-3].text == "cancelled: Cancelled by user"


def test_pending_approval_expires_with_its_turn_and_disconnect_resets() -> None:
    t = fold(
        [
            {"type": "accepted", "turn_id": "t1"},
            {"type": "approval_requested", "turn_id": "t1", "request_id": "r", "tool": "bash"},
            {"type": "cancelled", "turn_id": "t1"},
        ]
    )
    assert t.pending_approval is None
    assert [e.status for e in t.entries if e.kind == "approval"] == ["expired"]
    t.apply({"type": "accepted", "turn_id": "t2"})
    t.apply({"type": "disconnected", "message": "connection lost"})
    assert not t.busy and t.entries[-1].kind == "error"


def test_status_line_and_argument_summary() -> None:
    line = StatusLine(agent="a", model="m", session_id="session-" + "f" * 32, tokens=5).render()
    assert line == "idle · agent a · model m · session-ffffffff… · tokens 5"
    assert summarize_args({"b": 1, "a": "x\ny"}) == '{"a": "x\\ny", "b": 1}'
    assert summarize_args({"t": "z" * 500}, limit=20).endswith("…")
    assert len(summarize_args({"t": "z" * 500}, limit=20)) == 20


def test_history_persists_multiline_skips_damage_and_keeps_the_draft(tmp_path: Path) -> None:
    path = tmp_path / "tui_history"
    path.write_text('"old"\nnot json\n42\n')
    h = InputHistory(path, limit=3)
    assert h.entries == ["old"]
    h.add("one\ntwo")
    h.add("one\ntwo")  # repeated: not stored twice
    h.add("three")
    assert h.previous("draft") == "three"
    assert h.previous("ignored") == "one\ntwo"
    assert h.previous("ignored") == "old"
    assert h.previous("ignored") is None
    assert h.next() == "one\ntwo"
    assert h.next() == "three"
    assert h.next() == "draft"
    assert h.next() is None
    h.add("four")  # over the limit: the file is rewritten with the newest 3
    assert InputHistory(path, limit=3).entries == ["one\ntwo", "three", "four"]


def test_retry_after_streamed_text_replaces_the_void_draft() -> None:
    t = fold(
        [
            Accepted(S, "t1").to_dict(),
            TextChunk(S, "t1", text="Half an ans").to_dict(),
            Retrying(
                S, "t1", attempt=2, delay=0.5, message="network", discard_partial=True
            ).to_dict(),
            TextChunk(S, "t1", text="The whole answer.").to_dict(),
            TurnDone(S, "t1", text="The whole answer.").to_dict(),
        ]
    )
    answers = [e.text for e in t.entries if e.kind == "assistant"]
    assert answers == ["The whole answer."]


def test_retry_without_discard_keeps_the_text() -> None:
    t = fold(
        [
            Accepted(S, "t1").to_dict(),
            TextChunk(S, "t1", text="Kept. ").to_dict(),
            Retrying(S, "t1", attempt=2, delay=0.5, message="x", discard_partial=False).to_dict(),
            TextChunk(S, "t1", text="More.").to_dict(),
        ]
    )
    assert [e.text for e in t.entries if e.kind == "assistant"] == ["Kept. More."]
