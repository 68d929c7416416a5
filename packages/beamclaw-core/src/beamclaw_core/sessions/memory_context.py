"""Memory wired into turns (issue 6, docs/memory.md "Wired in").

* :class:`AutoContext` — with ``[memory] auto_context``, the agent's memory is searched
  with the user's message when a turn's first LLM request is built (after one incremental
  ``index_workspace`` pass, so MEMORY.md and the daily logs are searched as they are on
  disk, edits made outside the agent included), and the hits become
  one clearly labelled system message of the LLM view. The hits are kept for the rest of
  that turn, so every request of the turn sees the same context (a stable prompt prefix);
  the message is never stored as history.
* :class:`TranscriptIndexer` — after each turn, the conversation's new user and assistant
  messages are indexed (``MemoryService.index_transcript``) by one background worker, in
  batches: sessions whose turns end within ``BATCH_DELAY_SECONDS`` of each other are read
  in one query and indexed in one call per agent (at most ``MAX_BATCH_SESSIONS`` at a
  time). Indexing never blocks or fails a turn:
  errors are logged and the next turn retries from the same point.
"""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Hashable
from contextlib import suppress
from datetime import UTC, datetime

from loguru import logger

from beamclaw_core.messages import Message, Role
from beamclaw_core.store import ConversationStore
from beamclaw_memory import MemoryService, SearchHit, TranscriptMessage

AUTO_CONTEXT_LABEL = "[memory:auto_context]"
MAX_HIT_CHARS = 1_000
INDEXED_ROLES = (Role.USER, Role.ASSISTANT)


def format_auto_context(hits: tuple[SearchHit, ...] | list[SearchHit]) -> str | None:
    """The system-message text for ``hits`` (None when there are none)."""
    if not hits:
        return None
    lines = [
        f"{AUTO_CONTEXT_LABEL} Entries from your long-term memory that may be relevant to "
        "the user's latest message, found automatically by a memory search (the user did "
        "not write them; they may be outdated):"
    ]
    for n, hit in enumerate(hits, 1):
        when = (
            f", {datetime.fromtimestamp(hit.updated_at, UTC).date().isoformat()}"
            if hit.updated_at
            else ""
        )
        text = " ".join(hit.text.split())
        if len(text) > MAX_HIT_CHARS:
            text = text[:MAX_HIT_CHARS] + " …"
        lines.append(f"{n}. ({hit.category.value}: {hit.origin}{when}) {text}")
    return "\n".join(lines)


class AutoContext:
    """Searches once per turn and remembers the result until the session's next turn."""

    def __init__(self, memory: MemoryService, limit: int) -> None:
        self.memory = memory
        self.limit = limit
        self._turns: dict[str, tuple[Hashable, Message | None]] = {}

    async def message(
        self, session_id: str, agent_id: str, turn_key: Hashable, text: str | None
    ) -> Message | None:
        """The auto-context message of the turn ``turn_key`` (searching on first use)."""
        cached = self._turns.get(session_id)
        if cached is not None and cached[0] == turn_key:
            return cached[1]
        message: Message | None = None
        if text and text.strip():
            try:
                await self.memory.index_workspace(agent_id)
            except Exception as e:  # stale files must not fail a turn; search what is indexed
                logger.warning("{}: workspace indexing failed: {}", session_id, e)
            try:
                result = await self.memory.search(agent_id, text, limit=self.limit)
            except Exception as e:  # the protocol never raises; a bug must not fail a turn
                logger.warning("{}: auto-context search failed: {}", session_id, e)
            else:
                body = format_auto_context(list(result.hits))
                if body is not None:
                    message = Message.system(body, meta={"kind": "auto_context"})
        self._turns[session_id] = (turn_key, message)
        return message

    def forget(self, session_id: str) -> None:
        self._turns.pop(session_id, None)


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
