"""Indexing of an agent's sources — workspace files and session transcripts — into rows.

Invariants:

* Workspace indexing passes of one agent run one at a time (a tool's write and a search
  may start one together): each reads the recorded source states the previous one left,
  so a file is never chunked, written or embedded twice for one change. A pass whose
  files all have the stats a completed pass of this process left (settled: modified more
  than the racy window before it) reads nothing else, not even the database; and where
  inotify reports nothing changed in the workspace since a sound pass began
  (:class:`~beamclaw_memory.indexing.watch.ChangeWatch`), a pass does not even scan.
* A file's rows are made exactly its current chunks: new or edited chunks are written
  (and embedded), chunks that only moved get their new lines (no embedding), the rest
  are removed; a file that disappeared loses all its rows.
* ``totals`` sums every workspace pass's :class:`IndexReport`, the seam that shows how
  much indexing work was done.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from beamclaw_memory.backends.agent_ids import check_agent
from beamclaw_memory.backends.embedding_gate import EmbeddingGate
from beamclaw_memory.backends.live_index import LiveIndexes
from beamclaw_memory.backends.rows import MemoryRow, SourceState
from beamclaw_memory.errors import BeamclawMemoryError, StorageError
from beamclaw_memory.indexing.settled import RACY_SECONDS, SettledWorkspaces, fingerprint
from beamclaw_memory.indexing.sources import (
    SESSION_SOURCE_PREFIX,
    Piece,
    WorkspaceFile,
    as_message,
    content_hash,
    file_pieces,
    message_chunks,
    watched_directories,
    workspace_files,
)
from beamclaw_memory.indexing.watch import ChangeWatch
from beamclaw_memory.service import (
    FILE_SOURCE_PREFIX,
    IndexReport,
    MemoryCategory,
    TranscriptMessage,
)
from beamclaw_memory.settings import ChunkingSettings


class SourceIndexer:
    """Writes workspace files and transcripts as chunk rows through ``indexes``."""

    def __init__(
        self,
        indexes: LiveIndexes,
        gate: EmbeddingGate,
        chunking: ChunkingSettings,
        clock: Callable[[], float],
        watch: ChangeWatch | None = None,
    ) -> None:
        self._indexes = indexes
        self._rows = indexes.rows
        self._gate = gate
        self._chunking = chunking
        self._clock = clock
        self._passes: dict[str, asyncio.Lock] = {}
        self._settled = SettledWorkspaces()
        self.watch = watch if watch is not None else ChangeWatch()
        """Skips the scan of a workspace inotify saw unchanged (tests count its answers)."""
        self._sizes: dict[tuple[str, Path], int] = {}
        """Files found by the last sound pass of each workspace (its quiet report's)."""
        self._totals = IndexReport(passes=0)
        self._quiet_passes = 0
        self._quiet_files = 0
        """Passes the watch answered (and their files), not yet summed into ``totals``:
        building a report per pass cost more than the pass."""
        self._unchanged: dict[int, IndexReport] = {}
        """The report of a pass that found its ``n`` files as it left them, by ``n``
        (reports are frozen: one serves every such pass; one entry per workspace size)."""

    async def index_workspace(self, agent_id: str, root: Path) -> IndexReport:
        """One pass over ``root`` (the agent's passes one at a time). Raises
        :class:`StorageError` for a failing row store, ``OSError`` for the workspace."""
        check_agent(agent_id)
        key = (agent_id, root)
        if self.watch.quiet(key):  # no pass runs (one would have un-quieted the key)
            files = self._sizes[key]
            self._quiet_passes += 1
            self._quiet_files += files
            return self._unchanged_report(files)
        lock = self._passes.get(agent_id)
        if lock is None:
            lock = self._passes[agent_id] = asyncio.Lock()
        async with lock:
            try:
                report = await self._index_workspace(agent_id, root)
            except (BeamclawMemoryError, OSError):
                raise
            except Exception as exc:  # the row store's driver errors end here
                raise StorageError(
                    f"indexing the workspace of {agent_id} failed: {type(exc).__name__}: {exc}"
                ) from exc
        self._totals = self.totals.plus(report)
        return report

    @property
    def totals(self) -> IndexReport:
        """Every workspace indexing pass, summed (quiet passes counted as unchanged)."""
        if self._quiet_passes:
            quiet = IndexReport(
                passes=self._quiet_passes,
                sources_seen=self._quiet_files,
                sources_unchanged=self._quiet_files,
            )
            self._totals = self._totals.plus(quiet)
            self._quiet_passes = self._quiet_files = 0
        return self._totals

    def _unchanged_report(self, files: int) -> IndexReport:
        report = self._unchanged.get(files)
        if report is None:
            report = IndexReport(sources_seen=files, sources_unchanged=files)
            self._unchanged[files] = report
        return report

    async def _index_workspace(self, agent_id: str, root: Path) -> IndexReport:
        key = (agent_id, root)
        written = self.watch.arm(key, str(root), watched_directories(root))
        files = workspace_files(root)
        report = await self._scanned_pass(agent_id, root, files, written)
        sound = not report.skipped and not any(f.indirect for f in files)
        self._sizes[key] = len(files)
        self.watch.settle(key, sound=sound)
        return report

    async def _scanned_pass(
        self,
        agent_id: str,
        root: Path,
        files: list[WorkspaceFile],
        written: frozenset[str] | None,
    ) -> IndexReport:
        """``written``: locations known changed, read whatever their ``stat`` says (None:
        any may have, every file is read)."""
        seen = fingerprint(files)
        if written == frozenset() and self._settled.unchanged((agent_id, root), seen[0]):
            return self._unchanged_report(len(files))
        states = await self._rows.source_states(agent_id, FILE_SOURCE_PREFIX)
        report = _Tally()
        for file in files:
            await self._index_file(
                agent_id,
                file,
                states.get(file.source),
                report,
                reread=written is None or file.location in written,
            )
        for source in sorted(set(states) - {f.source for f in files}):
            removed = await self._rows.hashes_for_sources(agent_id, [source])
            await self._rows.delete_source(agent_id, source)
            await self._indexes.forget(agent_id, list(removed))
            report.sources_removed += 1
            report.chunks_removed += len(removed)
        self._settled.record((agent_id, root), *seen, self._clock(), complete=not report.skipped)
        return report.freeze()

    async def _index_file(
        self,
        agent_id: str,
        file: WorkspaceFile,
        state: SourceState | None,
        report: _Tally,
        *,
        reread: bool = False,
    ) -> None:
        """Index ``file`` unless its stat matches ``state`` (settled); ``reread``: read and
        compare its content whatever the stat says."""
        report.sources_seen += 1
        try:
            stat = file.path.stat()
            if (
                not reread
                and state is not None
                and state.size == stat.st_size
                and state.mtime_ns == stat.st_mtime_ns
                and state.indexed_at - stat.st_mtime > RACY_SECONDS
            ):
                report.sources_unchanged += 1
                return
            limit = self._chunking.max_file_bytes
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
            await self._rows.put_source(agent_id, new_state)
            report.sources_unchanged += 1
            return
        pieces = file_pieces(file.relpath, text, self._chunking.size, self._chunking.overlap)
        stamp = file.dated if file.dated is not None else stat.st_mtime
        await self._index_pieces(agent_id, file, pieces, stamp, stat.st_mtime, report)
        await self._rows.put_source(agent_id, new_state)
        report.sources_changed += 1

    async def index_transcript(
        self,
        agent_id: str,
        messages: Iterable[TranscriptMessage | tuple[str, int, str, str]],
    ) -> IndexReport:
        """Write the chunks of ``messages`` not stored yet (one lookup, one embedding call
        and one write for the whole batch of sessions)."""
        check_agent(agent_id)
        by_session: dict[str, list[TranscriptMessage]] = {}
        for item in messages:
            message = as_message(item)
            by_session.setdefault(message.session_id, []).append(message)
        report = _Tally()
        size, overlap = self._chunking.size, self._chunking.overlap
        now = self._clock()
        chunks: dict[str, list[tuple[str, str]]] = {
            SESSION_SOURCE_PREFIX + session_id: [
                pair for m in items if m.text.strip() for pair in message_chunks(m, size, overlap)
            ]
            for session_id, items in by_session.items()
        }
        existing = await self._rows.hashes_for_keys(
            agent_id, [k for pairs in chunks.values() for k, _ in pairs]
        )
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
        vectors, error = await self._gate.try_embed([t for _, _, t in fresh])
        if error is not None:
            report.embedding_error = error
        model = self._gate.model
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
            await self._indexes.write(agent_id, rows)
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
        """Make the file's rows exactly ``pieces`` (the module invariant)."""
        existing = await self._rows.hashes_for_sources(agent_id, [file.source])
        lines = {p.key: p.lines for p in pieces}
        kept = {p.key for p in pieces if existing.get(p.key) == content_hash(p.text)}
        fresh = [(file.source, p.key, p.text) for p in pieces if p.key not in kept]
        await self._store_chunks(
            agent_id, file.category, fresh, created_at, updated_at, report, lines
        )
        if kept:
            moved = [
                replace(row, lines=lines[row.key])
                for row in await self._rows.fetch(agent_id, sorted(kept))
                if row.lines != lines[row.key]
            ]
            if moved:
                await self._indexes.write(agent_id, moved)
        keep = set(lines)
        stale = [k for k in existing if k not in keep]
        await self._indexes.delete(agent_id, stale)
        report.chunks_removed += len(stale)


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
