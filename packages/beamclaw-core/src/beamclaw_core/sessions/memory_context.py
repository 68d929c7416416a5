"""Memory wired into turns (issues 6 and 26, docs/memory.md "Wired in").

* :class:`AutoContext` — with ``[memory] auto_context``, the agent's memory is searched
  with the user's message when a turn's first LLM request is built (after one incremental
  ``index_workspace`` pass, so MEMORY.md and the daily logs are searched as they are on
  disk, edits made outside the agent included), and the hits that fit the token budget
  (``auto_context_max_tokens``) become one clearly labelled system message of the LLM
  view. A hit is left out when the model sees its text already: a message of this
  session still in the view (its transcript chunk, by position: the search itself
  leaves those out, :class:`~beamclaw_memory.SeenTranscript`, so however many of them
  match best they never take the place of a memory the model has not seen), or a text
  equal to a better hit's (after whitespace is folded); ``limit`` counts the hits kept,
  out of twice as many searched for. The hits are kept for the rest of that turn, so every
  request of the turn sees the same context (a stable prompt prefix), and dropped when
  it ends (an idle session holds none: :meth:`AutoContext.on_effect`); the message is
  never stored as history.
  The lookup never blocks a turn: after ``auto_context_deadline_ms`` the turn goes on
  without it, the lookup finishes in the background, and no second lookup of that agent
  starts while one still runs.
* :class:`TranscriptIndexer` — after each turn, the conversation's new user and assistant
  messages are indexed (``MemoryService.index_transcript``) by one background worker, in
  batches: sessions whose turns end within ``BATCH_DELAY_SECONDS`` of each other are read
  in one query and indexed in one call per agent (at most ``MAX_BATCH_SESSIONS`` at a
  time). Indexing never blocks or fails a turn:
  errors are logged and the next turn retries from the same point.

Injected messages carry ``meta["kind"]`` in :data:`INJECTED_KINDS`
(:func:`is_injected`): the memory flush leaves them out of its request, so the model is
never asked to save again what memory just gave it.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Awaitable, Callable, Hashable, Sequence
from contextlib import suppress
from datetime import UTC, datetime

from loguru import logger

from beamclaw_core.loop import effects as fx
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers.tokens import estimate_tokens
from beamclaw_core.sessions.ends import SessionEnd
from beamclaw_core.store import ConversationStore
from beamclaw_memory import MemoryService, SearchHit, SeenTranscript, TranscriptMessage

AUTO_CONTEXT_LABEL = "[memory:auto_context]"
AUTO_CONTEXT_KIND = "auto_context"
SHORT_TERM_KIND = "short_term"
INJECTED_KINDS = frozenset({AUTO_CONTEXT_KIND, SHORT_TERM_KIND})
"""``meta["kind"]`` of the view-only messages memory adds to a request."""
MAX_HIT_CHARS = 1_000
INDEXED_ROLES = (Role.USER, Role.ASSISTANT)


def is_injected(message: Message) -> bool:
    """Whether ``message`` was added by memory (auto-context, short-term memory)."""
    return message.meta.get("kind") in INJECTED_KINDS


_HEADER = (
    f"{AUTO_CONTEXT_LABEL} Entries from your long-term memory that may be relevant to "
    "the user's latest message, found automatically by a memory search (the user did "
    "not write them; they may be outdated):"
)


def _hit_line(n: int, hit: SearchHit) -> str:
    when = (
        f", {datetime.fromtimestamp(hit.updated_at, UTC).date().isoformat()}"
        if hit.updated_at
        else ""
    )
    text = " ".join(hit.text.split())
    if len(text) > MAX_HIT_CHARS:
        text = text[:MAX_HIT_CHARS] + " …"
    return f"{n}. ({hit.category.value}: {hit.origin}{when}) {text}"


_HEADER_TOKENS = estimate_tokens(_HEADER)


def budgeted_lines(hits: Sequence[SearchHit], max_tokens: int | None) -> list[str]:
    """The numbered lines of the leading ``hits`` whose block stays within ``max_tokens``
    (estimated; all of them when None): the first hit that does not fit ends the block.
    Each line is built once, for its cost and for the block."""
    used = _HEADER_TOKENS
    lines: list[str] = []
    for n, hit in enumerate(hits, 1):
        line = _hit_line(n, hit)
        cost = estimate_tokens(line) + 1
        if max_tokens is not None and used + cost > max_tokens:
            break
        used += cost
        lines.append(line)
    return lines


def within_budget(hits: Sequence[SearchHit], max_tokens: int | None) -> list[SearchHit]:
    """The leading ``hits`` :func:`budgeted_lines` keeps."""
    return list(hits[: len(budgeted_lines(hits, max_tokens))])


def _block(lines: list[str]) -> str | None:
    return "\n".join([_HEADER, *lines]) if lines else None


def format_auto_context(hits: Sequence[SearchHit], max_tokens: int | None = None) -> str | None:
    """The system-message text for the ``hits`` :func:`within_budget` keeps (None when
    that is none)."""
    return _block(budgeted_lines(hits, max_tokens))


def _deadline_passed(waiter: asyncio.Future[list[SearchHit] | None]) -> None:
    if not waiter.done():
        waiter.set_result(None)


class AutoContext:
    """Searches once per turn, within a deadline, and remembers the result until the
    turn ends."""

    def __init__(
        self,
        memory: MemoryService,
        limit: int,
        *,
        max_tokens: int | None = None,
        deadline_seconds: float | None = None,
        view_start: Callable[[str], Awaitable[int | None]] | None = None,
    ) -> None:
        """``view_start``: ``session_id ->`` the ``seq`` of the first message its view
        shows verbatim (None: not known, nothing left out by position)."""
        self.memory = memory
        self.limit = limit
        self.view_start = view_start
        self.max_tokens = max_tokens
        self.deadline_seconds = deadline_seconds
        self._turns: dict[str, tuple[Hashable, Message | None]] = {}
        self._running: dict[str, asyncio.Task[None]] = {}
        """The lookup of each agent still in flight (one at a time)."""
        self.skipped = 0
        """Lookups a turn did not wait for (deadline passed, or the last one still ran)."""

    async def message(
        self, session_id: str, agent_id: str, turn_key: Hashable, text: str | None
    ) -> Message | None:
        """The auto-context message of the turn ``turn_key`` (searching on first use)."""
        cached = self._turns.get(session_id)
        if cached is not None and cached[0] == turn_key:
            return cached[1]
        message: Message | None = None
        if text and text.strip():
            hits = self._unseen(await self._hits_in_time(session_id, agent_id, text))
            body = _block(budgeted_lines(hits, self.max_tokens))
            if body is not None:
                message = Message.system(body, meta={"kind": AUTO_CONTEXT_KIND})
        self._turns[session_id] = (turn_key, message)
        return message

    async def injected(self, session_id: str, agent_id: str, text: str) -> list[SearchHit]:
        """The hits a turn with the user message ``text`` is shown: searched within the
        deadline, kept within the budget (``bench/memory.py`` measures their recall)."""
        if not text.strip():
            return []
        hits = self._unseen(await self._hits_in_time(session_id, agent_id, text))
        return within_budget(hits, self.max_tokens)

    def _unseen(self, hits: list[SearchHit]) -> list[SearchHit]:
        """The first ``limit`` of ``hits`` (which hold no message of the view) whose text
        no better hit has (see the module)."""
        kept: list[SearchHit] = []
        texts: set[str] = set()
        for hit in hits:
            text = " ".join(hit.text.split())
            if text in texts:
                continue
            texts.add(text)
            kept.append(hit)
            if len(kept) == self.limit:
                break
        return kept

    async def _hits_in_time(self, session_id: str, agent_id: str, text: str) -> list[SearchHit]:
        """The lookup's hits, or none when it is still running after the deadline (it
        finishes in the background). The lookup hands its hits over itself, so a turn
        whose lookup never suspends resumes one loop pass after it, with no
        ``asyncio.wait``."""
        if agent_id in self._running:  # a slow backend: do not pile lookups on it
            self.skipped += 1
            return []
        start = await self.view_start(session_id) if self.view_start is not None else None
        seen = SeenTranscript(session_id, start) if start is not None else None
        loop = asyncio.get_running_loop()
        waiter: asyncio.Future[list[SearchHit] | None] = loop.create_future()
        task = loop.create_task(self._lookup_into(waiter, session_id, agent_id, text, seen))
        self._running[agent_id] = task
        # a task cancelled before its first step runs no ``finally``: settle it here
        task.add_done_callback(lambda t: self._settle(agent_id, t, waiter, []))
        timer = (
            loop.call_later(self.deadline_seconds, _deadline_passed, waiter)
            if self.deadline_seconds is not None
            else None
        )
        try:
            hits = await waiter
        finally:
            if timer is not None:
                timer.cancel()
        if hits is None:
            self.skipped += 1
            logger.info(
                "{}: auto-context skipped: memory did not answer within {} s",
                session_id,
                self.deadline_seconds,
            )
            return []
        return hits

    async def _lookup_into(
        self,
        waiter: asyncio.Future[list[SearchHit] | None],
        session_id: str,
        agent_id: str,
        text: str,
        seen: SeenTranscript | None,
    ) -> None:
        """Run one lookup and hand its hits to ``waiter`` as it ends (a lookup cancelled
        by :meth:`drain` hands none), the agent's slot freed first."""
        hits: list[SearchHit] = []
        try:
            hits = await self._lookup(session_id, agent_id, text, seen)
        finally:
            task = asyncio.current_task()
            assert task is not None
            self._settle(agent_id, task, waiter, hits)

    def _settle(
        self,
        agent_id: str,
        task: asyncio.Task[None],
        waiter: asyncio.Future[list[SearchHit] | None],
        hits: list[SearchHit],
    ) -> None:
        """``task``'s lookup is over: free the agent's slot (if still its own) and give
        ``hits`` to a turn still waiting (idempotent)."""
        if self._running.get(agent_id) is task:
            del self._running[agent_id]
        if not waiter.done():
            waiter.set_result(hits)

    async def _lookup(
        self, session_id: str, agent_id: str, text: str, seen: SeenTranscript | None
    ) -> list[SearchHit]:
        try:
            await self.memory.index_workspace(agent_id)
        except Exception as e:  # stale files must not fail a turn; search what is indexed
            logger.warning("{}: workspace indexing failed: {}", session_id, e)
        try:
            result = await self.memory.search(agent_id, text, limit=2 * self.limit, seen=seen)
        except Exception as e:  # the protocol never raises; a bug must not fail a turn
            logger.warning("{}: auto-context search failed: {}", session_id, e)
            return []
        return list(result.hits)

    async def drain(self, grace_seconds: float) -> None:
        """Wait up to ``grace_seconds`` for lookups still running in the background, then
        cancel them (the core's stop; a lookup only reads and indexes, a cancelled one is
        done again by the next turn)."""
        running = list(self._running.values())
        if not running:
            return
        _done, pending = await asyncio.wait(running, timeout=grace_seconds)
        for task in pending:
            task.cancel()
        if pending:
            await asyncio.wait(pending)

    def forget(self, session_id: str) -> None:
        self._turns.pop(session_id, None)

    def on_effect(self, effect: fx.Effect) -> None:
        """An effect hook: a session's context leaves memory when its turn ends (the next
        turn searches afresh anyway)."""
        if isinstance(effect, fx.NotifyClient) and effect.event.terminal:
            self.forget(effect.event.session_id)

    async def session_ended(self, end: SessionEnd) -> None:
        """A session-end hook: a lane that left memory leaves nothing cached here."""
        if end.closed:
            self.forget(end.session_id)


BATCH_DELAY_SECONDS = 0.1
"""How long a finished turn's indexing waits for others to join its batch."""
MAX_BATCH_SESSIONS = 16
"""Sessions indexed per database write: a bigger write would hold the writer (and the
turns committing behind it) for longer."""


class TranscriptIndexer:
    """Indexes finished turns' messages in the background, in batches (see the module)."""

    def __init__(
        self,
        store: ConversationStore,
        memory: MemoryService,
        *,
        delay: float = BATCH_DELAY_SECONDS,
    ) -> None:
        self.store = store
        self.memory = memory
        self.delay = delay
        self._seen: dict[str, int] = {}
        self._due: dict[str, str] = {}
        self._task: asyncio.Task[None] | None = None
        self._flush = asyncio.Event()

    def schedule(self, session_id: str, agent_id: str) -> None:
        """Index ``session_id``'s messages not indexed yet (returns at once)."""
        self._due[session_id] = agent_id
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name="index-transcripts")

    async def _run(self) -> None:
        try:
            while self._due:
                if (
                    self.delay > 0
                    and not self._flush.is_set()
                    and len(self._due) < MAX_BATCH_SESSIONS
                ):
                    with suppress(TimeoutError):
                        await asyncio.wait_for(self._flush.wait(), self.delay)
                due = dict(itertools.islice(self._due.items(), MAX_BATCH_SESSIONS))
                for session_id in due:
                    del self._due[session_id]
                try:
                    await self._index(due)
                except Exception as e:
                    logger.warning("transcript indexing of {} sessions failed: {}", len(due), e)
        finally:
            self._task = None

    async def _index(self, due: dict[str, str]) -> None:
        found = await self.store.messages_after({sid: self._seen.get(sid, 0) for sid in due})
        batches: dict[str, list[TranscriptMessage]] = {}
        for session_id, rows in found.items():
            batches.setdefault(due[session_id], []).extend(
                TranscriptMessage(
                    session_id=session_id, seq=row.seq, role=row.message.role.value, text=text
                )
                for row in rows
                if row.message is not None
                and row.message.role in INDEXED_ROLES
                and (text := row.message.text.strip())
            )
        for agent_id, batch in batches.items():
            if batch:
                await self.memory.index_transcript(agent_id, batch)
        for session_id, rows in found.items():  # only once indexed: a failure retries
            if rows:
                self._seen[session_id] = max(r.seq for r in rows)

    async def drain(self, grace_seconds: float | None = None) -> None:
        """Index what is scheduled now, without waiting for the batch window (cancelling
        what is left after ``grace_seconds``)."""
        task = self._task
        if task is None:
            return
        self._flush.set()
        try:
            _done, pending = await asyncio.wait([task], timeout=grace_seconds)
            if pending:
                task.cancel()
                await asyncio.wait(pending)
        finally:
            self._flush.clear()
