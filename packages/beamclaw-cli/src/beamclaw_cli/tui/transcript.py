"""What the TUI shows, derived from event dicts alone (no terminal, no framework).

Both chat backends deliver the same dicts: :meth:`TurnEvent.to_dict` in-process and the
daemon's ``/ws`` frames (which are those dicts plus ``session``/``error``/``pong``
frames). :class:`Transcript` folds them into a list of :class:`Entry` values and a
:class:`StatusLine`; the Textual app only draws what changed.

Invariants:

* :meth:`Transcript.apply` never raises for an unknown or malformed event; unknown types
  are ignored (newer servers may send more).
* Streamed text of one LLM step accumulates in one assistant entry; a tool call closes it,
  so text after the tool call starts a new entry, in order.
* A turn's final text is shown once: streamed chunks, or (when nothing streamed) the
  ``done`` text; command replies arrive as a ``notice`` and are not repeated.
* ``tokens`` sums the ``usage.total_tokens`` of every finished turn seen.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal

EntryKind = Literal["user", "assistant", "tool", "approval", "notice", "error"]

#: Event types that end a turn (``turn_done``/``turn_error`` are accepted as aliases).
TERMINAL_TYPES = frozenset({"done", "turn_done", "error", "turn_error", "cancelled", "dropped"})


@dataclass(frozen=True)
class Entry:
    """One block of the transcript.

    ``status`` is ``running``/``ok``/``error`` for tools, ``pending``/``yes``/``no``/
    ``always``/``timeout``/``policy`` for approvals, ``streaming``/``done`` for answers.
    """

    kind: EntryKind
    text: str = ""
    turn_id: str | None = None
    key: str | None = None
    """call_id (tools) or request_id (approvals)."""
    title: str = ""
    status: str = ""
    detail: str = ""


@dataclass(frozen=True)
class StatusLine:
    """The status line: who, which model, which session, what it costs, what happens."""

    agent: str = "default"
    model: str = ""
    session_id: str | None = None
    tokens: int = 0
    backend: str = ""
    activity: str = "idle"
    queued: int = 0
    """The queue position of this client's waiting message (0 = none waiting)."""

    def render(self) -> str:
        """One line, most urgent first: activity, agent, model, session, tokens, backend."""
        sid = self.session_id
        session = "new session" if not sid else (sid if len(sid) <= 20 else sid[:16] + "…")
        activity = self.activity + (f" (queued #{self.queued})" if self.queued else "")
        parts = [
            activity,
            f"agent {self.agent}",
            f"model {self.model or '?'}",
            session,
            f"tokens {self.tokens}",
            self.backend,
        ]
        return " · ".join(p for p in parts if p)


def summarize_args(args: Any, limit: int = 160) -> str:
    """Tool arguments on one line, shortened to ``limit`` characters."""
    if not args:
        return ""
    try:
        text = json.dumps(args, ensure_ascii=False, sort_keys=True)
    except (TypeError, ValueError):
        text = str(args)
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass
class Transcript:
    """The fold of every event seen; :meth:`apply` returns the indices it changed."""

    entries: list[Entry] = field(default_factory=list)
    status: StatusLine = field(default_factory=StatusLine)
    pending_approval: Entry | None = None
    _open_answer: dict[str, int] = field(default_factory=dict)
    _streamed: set[str] = field(default_factory=lambda: set())
    _noticed: set[str] = field(default_factory=lambda: set())
    _tools: dict[str, int] = field(default_factory=dict)
    _approvals: dict[str, int] = field(default_factory=dict)
    _running: set[str] = field(default_factory=lambda: set())
    _queued: dict[str, int] = field(default_factory=dict)

    # ------------------------------------------------------------------ local input

    def add_user(self, text: str) -> int:
        return self._add(Entry("user", text))

    def add_notice(self, text: str, *, error: bool = False) -> int:
        return self._add(Entry("error" if error else "notice", text))

    # ------------------------------------------------------------------ events

    def apply(self, event: dict[str, Any]) -> list[int]:
        """Fold one event dict in; returns the indices of new or changed entries."""
        kind = event.get("type")
        name = _HANDLERS.get(kind) if isinstance(kind, str) else None
        if name is None:
            return []
        changed: list[int] = getattr(self, name)(event)
        self._refresh_activity()
        return changed

    # ------------------------------------------------------------------ handlers

    def _session(self, e: dict[str, Any]) -> list[int]:
        sid = e.get("session_id")
        agent = e.get("agent")
        self.status = replace(
            self.status,
            session_id=sid if isinstance(sid, str) else self.status.session_id,
            agent=agent if isinstance(agent, str) else self.status.agent,
        )
        model = e.get("model")
        if isinstance(model, str) and model:
            self.status = replace(self.status, model=model)
        return []

    def _accepted(self, e: dict[str, Any]) -> list[int]:
        turn = _turn(e)
        if turn is not None:
            self._running.add(turn)
            self._queued.pop(turn, None)
        self._update_sid(e)
        return []

    def _queued_event(self, e: dict[str, Any]) -> list[int]:
        turn = _turn(e)
        position = e.get("position")
        pos = position if isinstance(position, int) else 1
        if turn is not None:
            self._queued[turn] = pos
        return [self._add(Entry("notice", f"queued — position {pos}", turn_id=turn))]

    def _text(self, e: dict[str, Any]) -> list[int]:
        turn = _turn(e) or "?"
        chunk = str(e.get("text", ""))
        if not chunk:
            return []
        self._streamed.add(turn)
        index = self._open_answer.get(turn)
        if index is None:
            index = self._add(Entry("assistant", chunk, turn_id=turn, status="streaming"))
            self._open_answer[turn] = index
            return [index]
        entry = self.entries[index]
        self.entries[index] = replace(entry, text=entry.text + chunk)
        return [index]

    def _tool_started(self, e: dict[str, Any]) -> list[int]:
        turn = _turn(e)
        changed = self._close_answer(turn)
        call_id = str(e.get("call_id", ""))
        tool = str(e.get("tool", "tool"))
        index = self._add(
            Entry(
                "tool",
                summarize_args(e.get("args")),
                turn_id=turn,
                key=call_id,
                title=tool,
                status="running",
            )
        )
        self._tools[call_id] = index
        return [*changed, index]

    def _tool_finished(self, e: dict[str, Any]) -> list[int]:
        call_id = str(e.get("call_id", ""))
        status = "error" if e.get("is_error") else "ok"
        preview = " ".join(str(e.get("preview", "")).split())
        index = self._tools.get(call_id)
        if index is None:
            tool = str(e.get("tool", "tool"))
            entry = Entry("tool", "", _turn(e), call_id, tool, status, preview)
            return [self._add(entry)]
        self.entries[index] = replace(self.entries[index], status=status, detail=preview)
        return [index]

    def _approval_requested(self, e: dict[str, Any]) -> list[int]:
        turn = _turn(e)
        changed = self._close_answer(turn)
        request_id = str(e.get("request_id", ""))
        entry = Entry(
            "approval",
            summarize_args(e.get("args"), limit=400),
            turn_id=turn,
            key=request_id,
            title=str(e.get("tool", "tool")),
            status="pending",
        )
        index = self._add(entry)
        self._approvals[request_id] = index
        self.pending_approval = entry
        return [*changed, index]

    def _approval_resolved(self, e: dict[str, Any]) -> list[int]:
        request_id = str(e.get("request_id", ""))
        decision = str(e.get("decision", "")) or "resolved"
        if self.pending_approval is not None and self.pending_approval.key == request_id:
            self.pending_approval = None
        index = self._approvals.get(request_id)
        if index is None:
            return []
        self.entries[index] = replace(self.entries[index], status=decision)
        return [index]

    def _retrying(self, e: dict[str, Any]) -> list[int]:
        changed: list[int] = []
        turn = _turn(e)
        open_index = self._open_answer.get(turn or "?")
        if e.get("discard_partial") and open_index is not None:
            # the failed call's streamed text is void: the retry streams the answer anew
            self.entries[open_index] = replace(self.entries[open_index], text="")
            changed.append(open_index)
        delay = e.get("delay")
        wait = f" in {float(delay):.1f}s" if isinstance(delay, int | float) else ""
        text = f"retrying (attempt {e.get('attempt', '?')}{wait}): {e.get('message', '')}"
        return [*changed, self._add(Entry("notice", text.rstrip(": "), turn_id=turn))]

    def _compacted(self, e: dict[str, Any]) -> list[int]:
        text = (
            f"history compacted: {e.get('before_tokens', '?')} → "
            f"{e.get('after_tokens', '?')} tokens"
            + (" (trimmed: summary failed)" if e.get("fallback") else "")
        )
        return [self._add(Entry("notice", text, turn_id=_turn(e)))]

    def _limit(self, e: dict[str, Any]) -> list[int]:
        text = str(e.get("message") or f"limit reached: {e.get('limit', '?')}")
        return [self._add(Entry("error", text, turn_id=_turn(e)))]

    def _notice(self, e: dict[str, Any]) -> list[int]:
        turn = _turn(e)
        if turn is not None:
            self._noticed.add(turn)
        return [self._add(Entry("notice", str(e.get("text", "")), turn_id=turn))]

    def _done(self, e: dict[str, Any]) -> list[int]:
        turn = _turn(e)
        changed = self._close_answer(turn)
        usage = e.get("usage")
        if isinstance(usage, dict):
            total = usage.get("total_tokens")  # pyright: ignore[reportUnknownMemberType, reportUnknownVariableType]
            if isinstance(total, int):
                self.status = replace(self.status, tokens=self.status.tokens + total)
        model = e.get("model")
        if isinstance(model, str) and model:
            self.status = replace(self.status, model=model)
        text = str(e.get("text") or "")
        if turn is not None and turn not in self._streamed and turn not in self._noticed and text:
            changed.append(self._add(Entry("assistant", text, turn_id=turn, status="done")))
        self._finish(turn)
        return changed

    def _error(self, e: dict[str, Any]) -> list[int]:
        turn = _turn(e)
        changed = self._close_answer(turn)
        kind = e.get("kind") or e.get("code")
        message = str(e.get("message") or e.get("detail") or "error")
        text = f"{kind}: {message}" if isinstance(kind, str) and kind else message
        changed.append(self._add(Entry("error", text, turn_id=turn)))
        self._finish(turn)
        return changed

    def _cancelled(self, e: dict[str, Any]) -> list[int]:
        turn = _turn(e)
        changed = self._close_answer(turn)
        reason = str(e.get("reason") or "")
        changed.append(self._add(Entry("notice", "cancelled" + (f": {reason}" if reason else ""))))
        self._finish(turn)
        return changed

    def _dropped(self, e: dict[str, Any]) -> list[int]:
        turn = _turn(e)
        reason = str(e.get("reason") or "")
        self._finish(turn)
        return [self._add(Entry("notice", "dropped" + (f": {reason}" if reason else "")))]

    def _disconnected(self, e: dict[str, Any]) -> list[int]:
        self._running.clear()
        self._queued.clear()
        self.pending_approval = None
        return [self._add(Entry("error", str(e.get("message") or "disconnected")))]

    # ------------------------------------------------------------------ helpers

    def _add(self, entry: Entry) -> int:
        self.entries.append(entry)
        return len(self.entries) - 1

    def _update_sid(self, e: dict[str, Any]) -> None:
        sid = e.get("session_id")
        if isinstance(sid, str) and sid and self.status.session_id != sid:
            self.status = replace(self.status, session_id=sid)

    def _close_answer(self, turn: str | None) -> list[int]:
        index = self._open_answer.pop(turn or "?", None)
        if index is None:
            return []
        self.entries[index] = replace(self.entries[index], status="done")
        return [index]

    def _finish(self, turn: str | None) -> None:
        if turn is None:
            return
        self._running.discard(turn)
        self._queued.pop(turn, None)
        if self.pending_approval is not None and self.pending_approval.turn_id == turn:
            index = self._approvals.get(self.pending_approval.key or "")
            if index is not None and self.entries[index].status == "pending":
                self.entries[index] = replace(self.entries[index], status="expired")
            self.pending_approval = None

    def _refresh_activity(self) -> None:
        if self.pending_approval is not None:
            activity = f"approve {self.pending_approval.title}? [y]es [n]o [a]lways"
        elif self._running:
            activity = "thinking…"
        else:
            activity = "idle"
        queued = min(self._queued.values()) if self._queued else 0
        self.status = replace(self.status, activity=activity, queued=queued)

    @property
    def busy(self) -> bool:
        """True while one of this client's turns runs or waits in the queue."""
        return bool(self._running or self._queued)


def _turn(e: dict[str, Any]) -> str | None:
    turn = e.get("turn_id")
    return turn if isinstance(turn, str) and turn else None


_HANDLERS: dict[str, str] = {
    "session": "_session",
    "accepted": "_accepted",
    "queued": "_queued_event",
    "text": "_text",
    "tool_started": "_tool_started",
    "tool_finished": "_tool_finished",
    "approval_requested": "_approval_requested",
    "approval_resolved": "_approval_resolved",
    "retrying": "_retrying",
    "compacted": "_compacted",
    "limit_reached": "_limit",
    "notice": "_notice",
    "done": "_done",
    "turn_done": "_done",
    "error": "_error",
    "turn_error": "_error",
    "cancelled": "_cancelled",
    "dropped": "_dropped",
    "disconnected": "_disconnected",
}
"""Event type → name of the :class:`Transcript` method folding it in."""
