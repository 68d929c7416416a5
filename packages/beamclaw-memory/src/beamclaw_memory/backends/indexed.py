"""The memory service: rows in a :class:`RowStore`, searched through per-agent indexes.

Invariants:

* ``search`` never raises. Whatever fails (empty query, the embedding endpoint erroring or
  timing out, vectors of the wrong dimension, even the database) the caller gets a
  :class:`SearchResult` whose ``mode`` says what was actually used and whose
  ``degraded_reason`` says why; failures also emit ``memory_degraded``.
* Before every search the agent's index is reconciled with the row store (a signature
  query, and a per-key version diff when it differs), so rows written by another process
  on the same database are found.
* Workspace indexing passes of one agent run one at a time (a tool's write and a search
  may start one together): each reads the recorded source states the previous one left,
  so a file is never chunked, written or embedded twice for one change. A pass whose
  files all have the stats a completed pass of this process left (settled: modified more
  than the racy window before it) reads nothing else, not even the database.
  ``index_totals`` sums every pass's :class:`IndexReport`, the seam that shows how much
  indexing work was done.
* After the embedding endpoint fails, searches use keyword ranking without calling it
  for ``failure_cooldown_seconds``; rows stored meanwhile are embedded at a later search.
"""

from __future__ import annotations

import asyncio
import re
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np

from beamclaw_memory.backends.rows import MemoryRow, RowStore, SourceState
from beamclaw_memory.embeddings.client import Embedder
from beamclaw_memory.errors import (
    BeamclawMemoryError,
    EmbeddingDimensionError,
    EmbeddingError,
    EmbeddingUnavailableError,
    InvalidMemoryInputError,
    StorageError,
)
from beamclaw_memory.indexing.settled import RACY_SECONDS, SettledWorkspaces, fingerprint
from beamclaw_memory.indexing.sources import (
    INDEXER_KEY_PREFIX,
    SESSION_SOURCE_PREFIX,
    Piece,
    WorkspaceFile,
    as_message,
    content_hash,
    file_pieces,
    message_chunks,
    workspace_files,
)
from beamclaw_memory.search.index import AgentIndex
from beamclaw_memory.search.ranking import rank
from beamclaw_memory.search.tokenizer import Tokenizer
from beamclaw_memory.service import (
    FILE_SOURCE_PREFIX,
    IndexReport,
    MemoryCategory,
    MemoryEntry,
    SearchHit,
    SearchMode,
    SearchResult,
    TranscriptMessage,
)
from beamclaw_memory.settings import MemorySettings
from beamclaw_obs import EventType, beamclaw_home, emit

_AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,127}$")
NO_PROVIDER = "no embedding provider configured"


def _check_agent(agent_id: str) -> None:
    if not _AGENT_ID.match(agent_id) or ".." in agent_id:
        raise InvalidMemoryInputError("agent_id", f"{agent_id!r} is not a valid agent id")


def _entry(row: MemoryRow) -> MemoryEntry:
    return MemoryEntry(
        key=row.key,
        value=row.value,
        category=row.category,
        created_at=row.created_at,
        updated_at=row.updated_at,
        source=row.source,
    )


class IndexedMemory:
    """:class:`~beamclaw_memory.MemoryService` over any :class:`RowStore`."""

    def __init__(
        self,
        rows: RowStore,
        settings: MemorySettings | None = None,
        *,
        embedder: Embedder | None = None,
        clock: Callable[[], float] = time.time,
        home: Path | None = None,
    ) -> None:
        self.rows = rows
        self.settings = settings or MemorySettings()
        self.embedder = embedder
        self._clock = clock
        self._home = home
        self._tokenizer = Tokenizer(self.settings.search.stopwords)
        self._indexes: dict[str, AgentIndex] = {}
        self._locks: dict[str, asyncio.Lock] = {}
        self._indexing: dict[str, asyncio.Lock] = {}
        self._settled = SettledWorkspaces()
        self.index_totals = IndexReport(passes=0)
        """Every workspace indexing pass of this service, summed."""
        self._embed_blocked_until = 0.0
        self._embed_failure = ""

    # ------------------------------------------------------------------ entries
    async def store(
        self,
        agent_id: str,
        key: str,
        value: str,
        category: MemoryCategory,
        source: str | None = None,
    ) -> MemoryEntry:
        """Store (or replace) a fact. Raises :class:`InvalidMemoryInputError` on bad input."""
        _check_agent(agent_id)
        key = key.strip()
        if not key or len(key) > 512:
            raise InvalidMemoryInputError("key", "a key is 1 to 512 characters")
        if key.startswith(INDEXER_KEY_PREFIX):
            raise InvalidMemoryInputError("key", "keys starting with '@' belong to the indexer")
        if not value.strip():
            raise InvalidMemoryInputError("value", "the value is empty")
        if len(value) > self.settings.max_value_chars:
            raise InvalidMemoryInputError(
                "value",
                f"{len(value)} characters is more than the {self.settings.max_value_chars} "
                "allowed; store a summary or write it to a workspace file",
            )
        category = MemoryCategory(category)
        existing = await self.rows.get(agent_id, key)
        digest = content_hash(value)
        if (
            existing is not None
            and existing.content_hash == digest
            and existing.category == category
            and existing.source == source
        ):
            return _entry(existing)
        now = self._clock()
        vectors, _ = await self._try_embed([value])
        row = MemoryRow(
            key=key,
            value=value,
            category=category,
            source=source,
            content_hash=digest,
            created_at=existing.created_at if existing is not None else now,
            updated_at=now,
            embedding=vectors[0] if vectors else None,
            embedding_model=self.embedder.model if vectors and self.embedder else None,
        )
        await self._write(agent_id, [row])
        return _entry(row)

    async def get(self, agent_id: str, key: str) -> MemoryEntry | None:
        row = await self.rows.get(agent_id, key)
        return _entry(row) if row is not None else None

    async def forget(self, agent_id: str, key: str) -> bool:
        async with self._lock(agent_id):
            removed = await self.rows.delete(agent_id, [key]) > 0
            index = self._indexes.get(agent_id)
            if index is not None and removed:
                index.remove(key)
                index.signature = None
        return removed

    async def recall(
        self,
        agent_id: str,
        query: str,
        limit: int = 5,
        category: MemoryCategory | None = None,
    ) -> list[MemoryEntry]:
        """Entries matching ``query`` by keyword (the most recent ones for an empty query)."""
        limit = max(1, min(limit, 100))
        if not query.strip():
            return [_entry(r) for r in await self.rows.recent(agent_id, limit, category)]
        result = await self.search(
            agent_id, query, mode=SearchMode.KEYWORD, limit=limit, category=category
        )
        by_key = {r.key: r for r in await self.rows.fetch(agent_id, [h.key for h in result.hits])}
        return [_entry(by_key[h.key]) for h in result.hits if h.key in by_key]

    # ------------------------------------------------------------------ search
    async def search(
        self,
        agent_id: str,
        query: str,
        *,
        mode: SearchMode = SearchMode.HYBRID,
        limit: int = 5,
        category: MemoryCategory | None = None,
    ) -> SearchResult:
        """Ranked hits for ``query``. Never raises (see the module invariants)."""
        started = time.monotonic()
        try:
            result = await self._search(agent_id, query, SearchMode(mode), limit, category)
        except Exception as exc:  # search must never raise into the agent
            reason = f"memory search failed: {type(exc).__name__}: {exc}"
            emit(EventType.MEMORY_DEGRADED, agent_id=agent_id, reason=reason)
            result = SearchResult(hits=(), mode=SearchMode.KEYWORD, degraded_reason=reason)
        emit(
            EventType.MEMORY_SEARCH,
            agent_id=agent_id,
            mode=str(mode),
            used=str(result.mode),
            hits=len(result.hits),
            degraded=result.degraded_reason is not None,
            duration_ms=round((time.monotonic() - started) * 1000, 2),
        )
        return result

    async def _search(
        self,
        agent_id: str,
        query: str,
        mode: SearchMode,
        limit: int,
        category: MemoryCategory | None,
    ) -> SearchResult:
        query = query.strip()[: self.settings.search.max_query_chars]
        if not query:
            return SearchResult(hits=(), mode=SearchMode.KEYWORD, degraded_reason="empty query")
        _check_agent(agent_id)
        limit = max(1, min(limit, 100))
        candidates = limit * self.settings.search.candidate_multiplier
        index = await self._synced(agent_id)
        mask = index.mask(category)
        tokens = self._tokenizer(query)
        keyword = index.bm25.top(tokens, candidates, mask) if tokens else []
        vector: list[tuple[int, float]] = []
        used, degraded = mode, None
        if mode is not SearchMode.KEYWORD:
            if self.embedder is None:
                used, degraded = SearchMode.KEYWORD, NO_PROVIDER
            else:
                try:
                    vector = await self._vector_candidates(agent_id, index, query, candidates, mask)
                except EmbeddingError as exc:
                    used, degraded = SearchMode.KEYWORD, exc.reason
                    emit(
                        EventType.MEMORY_DEGRADED,
                        agent_id=agent_id,
                        model=exc.model,
                        reason=exc.reason,
                    )
        ranked = rank(
            index, used, keyword, vector, self.settings.search, now=self._clock(), limit=limit
        )
        hits = tuple(
            SearchHit(
                key=doc.key,
                text=doc.text,
                score=round(score, 6),
                category=doc.category,
                source=doc.source,
                updated_at=doc.updated_at,
                lines=doc.lines,
            )
            for doc, score in ((index.doc(slot), score) for slot, score in ranked)
        )
        return SearchResult(hits=hits, mode=used, degraded_reason=degraded)

    async def _vector_candidates(
        self,
        agent_id: str,
        index: AgentIndex,
        query: str,
        k: int,
        mask: np.ndarray | None,
    ) -> list[tuple[int, float]]:
        assert self.embedder is not None
        await self._embed_missing(agent_id, index)
        (query_vector,) = await self._embed([query])
        floor = self.settings.search.min_similarity
        try:
            return [p for p in index.vectors.top(query_vector, k, mask) if p[1] >= floor]
        except ValueError as exc:
            expected = index.vectors.dimensions or 0
            # stored vectors came from another model or size: re-embed them next search
            index.reset_vectors(self.embedder.model)
            raise EmbeddingDimensionError(
                self.embedder.model, expected, int(query_vector.shape[0])
            ) from exc

    async def _embed_missing(self, agent_id: str, index: AgentIndex) -> None:
        assert self.embedder is not None
        missing = index.missing_vectors()
        if not missing:
            return
        vectors = await self._embed([index.doc(s).text for s in missing])
        items: list[tuple[str, np.ndarray, str]] = []
        for slot, vector in zip(missing, vectors, strict=True):
            if not index.set_vector(slot, vector):
                expected = index.vectors.dimensions or 0
                index.reset_vectors(self.embedder.model)
                raise EmbeddingDimensionError(self.embedder.model, expected, int(vector.shape[0]))
            items.append((index.doc(slot).key, vector, self.embedder.model))
        changed = await self.rows.set_embeddings(agent_id, items)
        index.versions.update(changed)
        index.signature = None

    # ------------------------------------------------------------------ embeddings
    async def _embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Embed through the (caching) embedder, honouring the failure cooldown."""
        assert self.embedder is not None
        now = self._clock()
        if now < self._embed_blocked_until:
            raise EmbeddingUnavailableError(
                self.embedder.model,
                f"{self._embed_failure} (endpoint retried after "
                f"{self._embed_blocked_until - now:.0f}s)",
            )
        try:
            vectors = await self.embedder.embed(texts)
        except EmbeddingError as exc:
            self._embed_failure = exc.reason
            self._embed_blocked_until = (
                self._clock() + self.settings.embeddings.failure_cooldown_seconds
            )
            raise
        if len(vectors) != len(texts):
            raise EmbeddingUnavailableError(
                self.embedder.model, f"asked for {len(texts)} vectors, got {len(vectors)}"
            )
        return vectors

    async def _try_embed(self, texts: Sequence[str]) -> tuple[list[np.ndarray] | None, str | None]:
        """Vectors for ``texts`` or ``(None, reason)``; never raises (indexing goes on)."""
        if self.embedder is None or not texts:
            return None, None
        try:
            return await self._embed(texts), None
        except EmbeddingError as exc:
            emit(EventType.MEMORY_DEGRADED, model=exc.model, reason=exc.reason)
            return None, exc.reason

    # ------------------------------------------------------------------ index upkeep
    def _lock(self, agent_id: str) -> asyncio.Lock:
        lock = self._locks.get(agent_id)
        if lock is None:
            lock = self._locks[agent_id] = asyncio.Lock()
        return lock

    async def _synced(self, agent_id: str) -> AgentIndex:
        """The agent's index, reconciled with the row store."""
        async with self._lock(agent_id):
            index = self._indexes.get(agent_id)
            if index is None:
                index = self._indexes[agent_id] = AgentIndex(self._tokenizer)
                index.reset_vectors(self.embedder.model if self.embedder else None)
            signature = await self.rows.signature(agent_id)
            if signature != index.signature:
                versions = await self.rows.versions(agent_id)
                for key in [k for k in index.versions if k not in versions]:
                    index.remove(key)
                changed = [k for k, v in versions.items() if index.versions.get(k) != v]
                for row in await self.rows.fetch(agent_id, changed):
                    index.apply(row)
                index.signature = signature
            return index

    async def _write(self, agent_id: str, rows: Sequence[MemoryRow]) -> None:
        async with self._lock(agent_id):
            changed = await self.rows.upsert(agent_id, rows)
            index = self._indexes.get(agent_id)
            if index is not None:
                for row in rows:
                    index.apply(_with_changed(row, changed[row.key]))
                index.signature = None

    async def _remove(self, agent_id: str, keys: Sequence[str]) -> None:
        if not keys:
            return
        async with self._lock(agent_id):
            await self.rows.delete(agent_id, keys)
            index = self._indexes.get(agent_id)
            if index is not None:
                for key in keys:
                    index.remove(key)
                index.signature = None

    # ------------------------------------------------------------------ indexing
    def workspace_of(self, agent_id: str) -> Path:
        """``$BEAMCLAW_HOME/agents/<agent_id>``."""
        _check_agent(agent_id)
        return (self._home or beamclaw_home()) / "agents" / agent_id

    async def index_workspace(self, agent_id: str, workspace: Path | None = None) -> IndexReport:
        _check_agent(agent_id)
        root = workspace if workspace is not None else self.workspace_of(agent_id)
        lock = self._indexing.setdefault(agent_id, asyncio.Lock())
        async with lock:
            try:
                report = await self._index_workspace(agent_id, root)
            except (BeamclawMemoryError, OSError):
                raise
            except Exception as exc:  # the row store's driver errors end here
                raise StorageError(
                    f"indexing the workspace of {agent_id} failed: {type(exc).__name__}: {exc}"
                ) from exc
        self.index_totals = self.index_totals.plus(report)
        return report

    async def _index_workspace(self, agent_id: str, root: Path) -> IndexReport:
        files = workspace_files(root)
        seen = fingerprint(files)
        if seen is not None and self._settled.unchanged((agent_id, root), seen[0]):
            return IndexReport(sources_seen=len(files), sources_unchanged=len(files))
        states = await self.rows.source_states(agent_id, FILE_SOURCE_PREFIX)
        report = _Tally()
        for file in files:
            await self._index_file(agent_id, file, states.get(file.source), report)
        for source in sorted(set(states) - {f.source for f in files}):
            removed = await self.rows.hashes_for_sources(agent_id, [source])
            await self.rows.delete_source(agent_id, source)
            await self._forget_in_index(agent_id, list(removed))
            report.sources_removed += 1
            report.chunks_removed += len(removed)
        if seen is not None:
            self._settled.record(
                (agent_id, root), *seen, self._clock(), complete=not report.skipped
            )
        return report.freeze()

    async def _index_file(
        self, agent_id: str, file: WorkspaceFile, state: SourceState | None, report: _Tally
    ) -> None:
        report.sources_seen += 1
        try:
            stat = file.path.stat()
            if (
                state is not None
                and state.size == stat.st_size
                and state.mtime_ns == stat.st_mtime_ns
                and state.indexed_at - stat.st_mtime > RACY_SECONDS
            ):
                report.sources_unchanged += 1
                return
            limit = self.settings.chunking.max_file_bytes
            with file.path.open("rb") as fh:
                data = fh.read(limit + 1)
        except OSError as exc:
            report.skipped.append(f"{file.relpath}: {exc.strerror or exc}")
            return
        if len(data) > limit:
            report.skipped.append(f"{file.relpath}: indexed only the first {limit} bytes")
            data = data[:limit]
        text = data.decode("utf-8", errors="replace")
        digest = content_hash(text)
        new_state = SourceState(file.source, digest, stat.st_size, stat.st_mtime_ns, self._clock())
        if state is not None and state.content_hash == digest:
            await self.rows.put_source(agent_id, new_state)
            report.sources_unchanged += 1
            return
        chunking = self.settings.chunking
        pieces = file_pieces(file.relpath, text, chunking.size, chunking.overlap)
        stamp = file.dated if file.dated is not None else stat.st_mtime
        await self._index_pieces(agent_id, file, pieces, stamp, stat.st_mtime, report)
        await self.rows.put_source(agent_id, new_state)
        report.sources_changed += 1

    async def index_transcript(
        self,
        agent_id: str,
        messages: Iterable[TranscriptMessage | tuple[str, int, str, str]],
    ) -> IndexReport:
        _check_agent(agent_id)
        by_session: dict[str, list[TranscriptMessage]] = {}
        for item in messages:
            message = as_message(item)
            by_session.setdefault(message.session_id, []).append(message)
        report = _Tally()
        chunking = self.settings.chunking
        now = self._clock()
        chunks: dict[str, list[tuple[str, str]]] = {
            SESSION_SOURCE_PREFIX + session_id: [
                pair
                for m in items
                if m.text.strip()
                for pair in message_chunks(m, chunking.size, chunking.overlap)
            ]
            for session_id, items in by_session.items()
        }
        # One lookup, one embedding call and one write for the whole batch of sessions.
        existing = await self.rows.hashes_for_sources(agent_id, list(chunks))
        fresh: list[tuple[str, str, str]] = []
        for source, pairs in chunks.items():
            report.sources_seen += 1
            new = [(source, k, t) for k, t in pairs if existing.get(k) != content_hash(t)]
            if new:
                report.sources_changed += 1
            else:
                report.sources_unchanged += 1
            fresh.extend(new)
        await self._store_chunks(agent_id, MemoryCategory.CONVERSATION, fresh, now, now, report)
        return report.freeze()

    async def _store_chunks(
        self,
        agent_id: str,
        category: MemoryCategory,
        fresh: list[tuple[str, str, str]],
        created_at: float,
        updated_at: float,
        report: _Tally,
        lines: dict[str, tuple[int, int] | None] | None = None,
    ) -> None:
        """Embed (when configured) and write ``(source, key, text)`` chunks as rows
        (``lines``: the line range of each file chunk, by key)."""
        vectors, error = await self._try_embed([t for _, _, t in fresh])
        if error is not None:
            report.embedding_error = error
        model = self.embedder.model if self.embedder is not None else None
        rows = [
            MemoryRow(
                key=key,
                value=text,
                category=category,
                source=source,
                content_hash=content_hash(text),
                created_at=created_at,
                updated_at=updated_at,
                embedding=vectors[i] if vectors else None,
                embedding_model=model if vectors else None,
                lines=lines.get(key) if lines is not None else None,
            )
            for i, (source, key, text) in enumerate(fresh)
        ]
        if rows:
            await self._write(agent_id, rows)
        report.chunks_written += len(rows)
        report.chunks_embedded += len(rows) if vectors else 0

    async def _index_pieces(
        self,
        agent_id: str,
        file: WorkspaceFile,
        pieces: list[Piece],
        created_at: float,
        updated_at: float,
        report: _Tally,
    ) -> None:
        """Make the file's rows exactly ``pieces``: new or edited chunks are written (and
        embedded), chunks that only moved get their new lines (no embedding), the file's
        other chunks are removed."""
        existing = await self.rows.hashes_for_sources(agent_id, [file.source])
        lines = {p.key: p.lines for p in pieces}
        kept = {p.key for p in pieces if existing.get(p.key) == content_hash(p.text)}
        fresh = [(file.source, p.key, p.text) for p in pieces if p.key not in kept]
        await self._store_chunks(
            agent_id, file.category, fresh, created_at, updated_at, report, lines
        )
        if kept:
            moved = [
                replace(row, lines=lines[row.key])
                for row in await self.rows.fetch(agent_id, sorted(kept))
                if row.lines != lines[row.key]
            ]
            if moved:
                await self._write(agent_id, moved)
        keep = set(lines)
        stale = [k for k in existing if k not in keep]
        await self._remove(agent_id, stale)
        report.chunks_removed += len(stale)

    async def _forget_in_index(self, agent_id: str, keys: list[str]) -> None:
        async with self._lock(agent_id):
            index = self._indexes.get(agent_id)
            if index is not None:
                for key in keys:
                    index.remove(key)
                index.signature = None

    async def aclose(self) -> None:
        if self.embedder is not None:
            await self.embedder.aclose()
        await self.rows.aclose()


def _with_changed(row: MemoryRow, changed_at: float) -> MemoryRow:
    return replace(row, changed_at=changed_at)


class _Tally:
    """Mutable counters behind an :class:`IndexReport`."""

    def __init__(self) -> None:
        self.sources_seen = 0
        self.sources_changed = 0
        self.sources_unchanged = 0
        self.sources_removed = 0
        self.chunks_written = 0
        self.chunks_removed = 0
        self.chunks_embedded = 0
        self.embedding_error: str | None = None
        self.skipped: list[str] = []

    def freeze(self) -> IndexReport:
        return IndexReport(
            sources_seen=self.sources_seen,
            sources_changed=self.sources_changed,
            sources_unchanged=self.sources_unchanged,
            sources_removed=self.sources_removed,
            chunks_written=self.chunks_written,
            chunks_removed=self.chunks_removed,
            chunks_embedded=self.chunks_embedded,
            embedding_error=self.embedding_error,
            skipped=tuple(self.skipped),
        )
