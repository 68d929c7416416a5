"""The Anthropic ``messages`` array and ``system`` blocks of successive requests, continued.

:func:`~beamclaw_core.providers.anthropic_wire.to_anthropic_messages` merges consecutive
messages of one role into a turn and
:func:`~beamclaw_core.providers.anthropic_wire.system_blocks` gathers every system
message: both walk the whole request. :class:`AnthropicRequests` keeps, per run (see
:mod:`~beamclaw_core.providers.request_fold`), the turns closed so far encoded in one
buffer, the still-open last turn, where each message's turn starts, and which messages
are system ones; a request continuing a run encodes only its open turn, and walks only
its head and the system messages of the stretch it shares with the run.

Invariants:

* The result equals the fresh one byte for byte. The buffer is reused only when the
  shared stretch starts a turn of its own: the request's head (the rebuilt system
  prompt) adds no turn, and the stretch's first message with blocks opened a turn in
  the run rather than being merged into one opened in front of it. Otherwise the array
  is built afresh from the per-message memo (the whole walk, as before).
* Memoised blocks are shared: a turn's block list is copied before it is extended, and
  no block is mutated (the cache marker goes on a copy).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from beamclaw_core.messages import Message, Role
from beamclaw_core.providers.anthropic_wire import (
    CACHE,
    anthropic_text_turn_memo,
    anthropic_turn_memo,
    to_anthropic_messages,
)
from beamclaw_core.providers.request_fold import RequestFold, Run

Turn = tuple[str, list[dict[str, Any]]]
"""A message's role on the wire and its content blocks (none: it sends no turn)."""

_NONE = -1
"""``ends[i]``: message ``i`` has no blocks (a system or empty message)."""
_MERGED = -2
"""``ends[i]``: message ``i``'s blocks joined the turn a message before it opened."""


@dataclass(eq=False, slots=True)
class _TurnsRun(Run):
    """A run whose ``data`` holds its closed turns, comma-joined, and whose ``ends[i]``
    is where the turn message ``i`` opened starts in ``data`` (or ``_NONE``/``_MERGED``)."""

    open_role: str | None = None
    open_blocks: list[dict[str, Any]] = field(default_factory=list[dict[str, Any]])
    system_at: list[int] = field(default_factory=list[int])
    """Positions of the system messages with text, ascending."""
    system_texts: list[str] = field(default_factory=list[str])
    others_at: list[int] = field(default_factory=list[int])
    """Positions of the other messages, ascending."""


def _encoded_turn(role: str, blocks: list[dict[str, Any]]) -> bytes:
    return orjson.dumps({"role": role, "content": blocks})


class AnthropicRequests(RequestFold[Turn]):
    """``to_anthropic_messages`` and ``system_blocks`` of successive requests."""

    def _new_run(self) -> Run:
        return _TurnsRun([])

    def _grow(self, run: Run, values: list[Turn]) -> None:
        assert isinstance(run, _TurnsRun)
        data, ends = run.data, run.ends
        for role, blocks in values:
            i = len(ends)
            message = run.messages[i]
            if message.role is Role.SYSTEM:
                if message.text:
                    run.system_at.append(i)
                    run.system_texts.append(message.text)
            else:
                run.others_at.append(i)
            if not blocks:
                ends.append(_NONE)
            elif role == run.open_role:
                run.open_blocks.extend(blocks)
                ends.append(_MERGED)
            else:
                if run.open_role is not None:
                    if data:
                        data += b","
                    data += _encoded_turn(run.open_role, run.open_blocks)
                ends.append(len(data) + 1 if data else 0)
                run.open_role, run.open_blocks = role, list(blocks)

    def request(
        self, messages: Sequence[Message], *, cache: bool
    ) -> tuple[orjson.Fragment, list[dict[str, Any]]]:
        """``(messages array, system blocks)``: ``to_anthropic_messages(messages)``
        encoded, and ``system_blocks(messages, cache=cache)``."""
        listed = messages if isinstance(messages, list) else list(messages)
        if not listed:
            return orjson.Fragment(b"[]"), []
        with self._lock:
            head, run = self._fold(listed)
            assert isinstance(run, _TurnsRun)
            array = _array(head, run)
            system = _system(listed[: len(listed) - len(run.messages) + run.start], run, cache)
        if array is None:
            array = orjson.Fragment(orjson.dumps(to_anthropic_messages(listed, turn_of=self._memo)))
        return array, system


def _array(head: list[Turn], run: _TurnsRun) -> orjson.Fragment | None:
    """The encoded turns of ``head`` + ``run.messages[run.start:]``, or None when they
    cannot be taken from ``run`` (see the module docstring)."""
    if any(blocks for _, blocks in head):
        return None
    ends = run.ends
    first = run.start
    while first < len(ends) and ends[first] == _NONE:
        first += 1
    if first == len(ends):
        return orjson.Fragment(b"[]")
    offset = ends[first]
    if offset == _MERGED:
        return None
    assert run.open_role is not None  # the turn ``first`` opened, or a later one, is open
    last = _encoded_turn(run.open_role, run.open_blocks)
    with memoryview(run.data) as view, view[offset:] as closed:
        return orjson.Fragment(b"".join((b"[", closed, b"," if len(closed) else b"", last, b"]")))


def _system(head: list[Message], run: _TurnsRun, cache: bool) -> list[dict[str, Any]]:
    """``system_blocks`` of ``head`` + ``run.messages[run.start:]``."""
    blocks: list[dict[str, Any]] = []
    leading = 0
    still_leading = True
    for m in head:
        if m.role is Role.SYSTEM:
            if m.text:
                blocks.append({"type": "text", "text": m.text})
                if still_leading:
                    leading = len(blocks)
        else:
            still_leading = False
    start = run.start
    other = bisect_left(run.others_at, start)
    first_other = run.others_at[other] if other < len(run.others_at) else len(run.messages)
    k = bisect_left(run.system_at, start)
    for at, text in zip(run.system_at[k:], run.system_texts[k:], strict=True):
        blocks.append({"type": "text", "text": text})
        if still_leading and at < first_other:
            leading = len(blocks)
    if cache and leading:
        blocks[leading - 1] = {**blocks[leading - 1], "cache_control": CACHE}
    return blocks


anthropic_requests = AnthropicRequests(anthropic_turn_memo)
"""The fold the Anthropic provider builds its requests with."""
anthropic_text_requests = AnthropicRequests(anthropic_text_turn_memo)
"""The same for a model that cannot see images (each image a note)."""


def anthropic_request_fold(*, vision: bool) -> AnthropicRequests:
    """The fold a request is built with (images, or notes)."""
    return anthropic_requests if vision else anthropic_text_requests
