"""The workspace change watch: a pass skips its scan only when inotify saw nothing change."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path
from typing import NamedTuple

import pytest

from beamclaw_memory import ChangeWatch, IndexedMemory, InMemoryRowStore, MemorySettings
from beamclaw_memory.indexing.watch import (
    IN_ATTRIB,
    IN_DELETE_SELF,
    IN_MODIFY,
    IN_Q_OVERFLOW,
    filesystem_of,
)
from beamclaw_memory.testing import CountingNotifier

AGENT = "default"


class Event(NamedTuple):
    """An event as ``inotify_simple`` reads it."""

    wd: int
    mask: int
    cookie: int
    name: str


def workspace(home: Path, *, daily: bool = True) -> Path:
    ws = home / "agents" / AGENT
    ws.mkdir(parents=True)
    (ws / "MEMORY.md").write_text("# Work\nWorks at Acme Rockets on telemetry.\n")
    if daily:
        (ws / "memory").mkdir()
        (ws / "memory" / "2024-03-01.md").write_text("Met Alice for coffee at the harbour.\n")
    return ws


def memory_with(tmp_path: Path, watch: ChangeWatch | None = None) -> IndexedMemory:
    return IndexedMemory(InMemoryRowStore(), MemorySettings(), home=tmp_path / "home", watch=watch)


@pytest.fixture
async def memory(tmp_path: Path) -> AsyncIterator[IndexedMemory]:
    service = memory_with(tmp_path)
    yield service
    await service.aclose()


async def texts(memory: IndexedMemory, query: str) -> list[str]:
    return [hit.text for hit in (await memory.search(AGENT, query)).hits]


async def test_an_unchanged_workspace_is_not_scanned_again(
    memory: IndexedMemory, tmp_path: Path
) -> None:
    workspace(tmp_path / "home")
    first = await memory.index_workspace(AGENT)
    assert first.sources_changed == 2
    again = await memory.index_workspace(AGENT)
    await memory.index_workspace(AGENT)
    assert memory.workspace_watch.quiet_answers == 2
    assert (again.sources_seen, again.sources_unchanged) == (2, 2)
    totals = memory.index_totals
    assert (totals.passes, totals.sources_seen, totals.sources_changed) == (3, 6, 2)
    assert totals.sources_unchanged == 4
    assert any("Acme" in t for t in await texts(memory, "Acme telemetry"))


async def test_an_edit_that_keeps_size_and_mtime_is_still_seen(
    memory: IndexedMemory, tmp_path: Path
) -> None:
    """What a ``stat`` cannot tell (``rsync -t``, ``tar`` and ``touch -r`` restore the
    mtime; two writes within one timestamp tick): the kernel reports the write."""
    ws = workspace(tmp_path / "home")
    target = ws / "MEMORY.md"
    stamp = target.stat().st_mtime - 3600
    os.utime(target, (stamp, stamp))
    await memory.index_workspace(AGENT)
    await memory.index_workspace(AGENT)
    before = target.stat()
    target.write_text("# Work\nWorks at Zeta Rockets on telemetry.\n")  # same size
    os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert target.stat().st_size == before.st_size
    report = await memory.index_workspace(AGENT)
    assert report.sources_changed == 1
    assert any("Zeta" in t for t in await texts(memory, "Zeta telemetry"))


async def test_new_daily_logs_and_a_new_memory_directory_are_indexed(
    memory: IndexedMemory, tmp_path: Path
) -> None:
    ws = workspace(tmp_path / "home", daily=False)
    await memory.index_workspace(AGENT)
    assert (await memory.index_workspace(AGENT)).sources_seen == 1  # quiet
    (ws / "memory").mkdir()
    (ws / "memory" / "2024-03-02.md").write_text("Booked the lighthouse tour.\n")
    assert (await memory.index_workspace(AGENT)).sources_changed == 1
    await memory.index_workspace(AGENT)  # quiet again, now watching memory/ too
    (ws / "memory" / "2024-03-03.md").write_text("Saw the comet from the pier.\n")
    assert (await memory.index_workspace(AGENT)).sources_changed == 1
    assert any("comet" in t for t in await texts(memory, "comet pier"))
    (ws / "memory" / "2024-03-03.md").unlink()
    assert (await memory.index_workspace(AGENT)).sources_removed == 1


async def test_files_the_index_does_not_read_cost_no_scan(
    memory: IndexedMemory, tmp_path: Path
) -> None:
    ws = workspace(tmp_path / "home")
    await memory.index_workspace(AGENT)
    (ws / "notes.txt").write_text("scratch")
    (ws / "sessions").mkdir()
    (ws / "sessions" / "today.jsonl").write_text("{}")
    await memory.index_workspace(AGENT)
    await memory.index_workspace(AGENT)
    assert memory.workspace_watch.quiet_answers == 2


async def test_a_workspace_replaced_by_a_rename_is_scanned(
    memory: IndexedMemory, tmp_path: Path
) -> None:
    ws = workspace(tmp_path / "home")
    await memory.index_workspace(AGENT)
    ws.rename(ws.with_name("old"))
    ws.mkdir()
    (ws / "MEMORY.md").write_text("Moved to Lisbon last spring.\n")
    report = await memory.index_workspace(AGENT)
    assert memory.workspace_watch.quiet_answers == 0
    assert report.sources_changed == 1 and report.sources_removed == 1
    assert any("Lisbon" in t for t in await texts(memory, "Lisbon"))


async def test_a_workspace_under_a_renamed_parent_is_scanned(
    memory: IndexedMemory, tmp_path: Path
) -> None:
    """A rename above the root sends no event to the root's watch: the root's identity
    is checked on every question."""
    home = tmp_path / "home"
    workspace(home)
    await memory.index_workspace(AGENT)
    (home / "agents").rename(home / "agents-old")
    ws = home / "agents" / AGENT
    ws.mkdir(parents=True)
    (ws / "MEMORY.md").write_text("Adopted a cat called Pixel.\n")
    await memory.index_workspace(AGENT)
    assert memory.workspace_watch.quiet_answers == 0
    assert any("Pixel" in t for t in await texts(memory, "cat Pixel"))


async def test_files_reached_through_links_are_always_scanned(
    memory: IndexedMemory, tmp_path: Path
) -> None:
    ws = workspace(tmp_path / "home", daily=False)
    (ws / "notes").mkdir()
    real = ws / "notes" / "soul.md"
    real.write_text("Loves astronomy.\n")
    (ws / "SOUL.md").symlink_to(real)
    await memory.index_workspace(AGENT)
    await memory.index_workspace(AGENT)
    assert memory.workspace_watch.quiet_answers == 0
    real.write_text("Loves sailing.\n")  # an event in notes/, which is not watched
    assert (await memory.index_workspace(AGENT)).sources_changed == 1
    os.link(ws / "MEMORY.md", ws / "notes" / "hard.md")  # another name for MEMORY.md
    (ws / "SOUL.md").unlink()
    await memory.index_workspace(AGENT)
    await memory.index_workspace(AGENT)
    assert memory.workspace_watch.quiet_answers == 0


@pytest.mark.parametrize(
    "watch",
    [
        pytest.param(lambda: ChangeWatch(filesystem=lambda _path: "nfs4"), id="network-fs"),
        pytest.param(lambda: ChangeWatch(notifier=lambda: None), id="no-inotify"),
    ],
)
async def test_without_a_usable_watch_every_pass_scans(tmp_path: Path, watch: object) -> None:
    assert callable(watch)
    change_watch = watch()
    assert isinstance(change_watch, ChangeWatch)
    memory = memory_with(tmp_path, change_watch)
    try:
        ws = workspace(tmp_path / "home")
        await memory.index_workspace(AGENT)
        await memory.index_workspace(AGENT)
        assert memory.workspace_watch.quiet_answers == 0
        (ws / "MEMORY.md").write_text("Works at Orbit Labs.\n")
        assert (await memory.index_workspace(AGENT)).sources_changed == 1
    finally:
        await memory.aclose()


class FakeNotifier:
    """An inotify instance whose events the test posts (the kernel's overflow cannot be
    provoked from a test)."""

    def __init__(self) -> None:
        self.pending: list[Event] = []
        self.watched: dict[str, int] = {}

    def add_watch(self, path: str, mask: int) -> int:
        return self.watched.setdefault(path, len(self.watched) + 1)

    def read(self, timeout: int | None = None) -> list[Event]:
        out, self.pending = self.pending, []
        return out

    def close(self) -> None:
        self.watched.clear()


def fake_watch() -> tuple[ChangeWatch, FakeNotifier]:
    notifier = FakeNotifier()
    return ChangeWatch(notifier=lambda: notifier, filesystem=lambda _path: "ext4"), notifier


def test_only_events_for_watched_names_or_an_overflow_end_quiet(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    watch, notifier = fake_watch()
    keys = {"a": str(root), "b": str(root / "sub")}

    def settled() -> None:
        for key in keys:
            watch.arm(key, str(root), {keys[key]: frozenset({"MEMORY.md"})})
            watch.settle(key, sound=True)

    settled()
    assert watch.quiet("a") and watch.quiet("b")
    a, b = notifier.watched[keys["a"]], notifier.watched[keys["b"]]
    notifier.pending.append(Event(a, IN_MODIFY, 0, "other.md"))
    assert watch.quiet("a")
    notifier.pending.append(Event(a, IN_MODIFY, 0, "MEMORY.md"))
    assert not watch.quiet("a") and watch.quiet("b")
    notifier.pending.append(Event(b, IN_ATTRIB | IN_DELETE_SELF, 0, ""))  # the dir itself
    assert not watch.quiet("b")
    settled()
    notifier.pending.append(Event(-1, IN_Q_OVERFLOW, 0, ""))
    assert not watch.quiet("a") and not watch.quiet("b")
    settled()
    watch.settle("a", sound=False)
    assert not watch.quiet("a") and watch.quiet("b")


def test_a_directory_watched_for_its_entries_reads_no_writes(tmp_path: Path) -> None:
    # the home: a skills directory (an entry on the way to inputs) beside the database
    home = tmp_path / "home"
    (home / "skills").mkdir(parents=True)
    db = home / "beamclaw.db-wal"
    db.write_bytes(b"")
    (home / "USER.md").write_text("Prefers long answers.\n")
    notifier = CountingNotifier()
    watch = ChangeWatch(notifier=lambda: notifier)
    watch.arm("entries", str(home), {str(home): frozenset({"skills"})}, entries_only={str(home)})
    watch.settle("entries", sound=True)
    for n in range(5):
        db.write_bytes(b"page" * n)
    assert watch.quiet("entries") and notifier.events == 0, "the database's writes: no event"
    # a key that reads a file in the same directory still sees its writes: the masks add up
    watch.arm("content", str(home), {str(home): frozenset({"USER.md"})})
    watch.settle("content", sound=True)
    watch.arm("entries", str(home), {str(home): frozenset({"skills"})}, entries_only={str(home)})
    watch.settle("entries", sound=True)
    (home / "USER.md").write_text("Prefers short answers.\n")
    assert not watch.quiet("content") and watch.quiet("entries")
    (home / "skills").rename(home / "skills.old")  # the entry itself: seen
    assert not watch.quiet("entries")


async def test_a_pass_that_failed_is_not_quiet(memory: IndexedMemory, tmp_path: Path) -> None:
    ws = workspace(tmp_path / "home")
    big = MemorySettings().chunking.max_file_bytes + 10
    (ws / "AGENTS.md").write_text("x " * big)  # indexed only in part: reported skipped
    first = await memory.index_workspace(AGENT)
    assert first.skipped
    await memory.index_workspace(AGENT)
    assert memory.workspace_watch.quiet_answers == 0


def test_the_filesystem_is_the_longest_mount_prefix(tmp_path: Path) -> None:
    info = tmp_path / "mountinfo"
    info.write_text(
        "22 1 8:1 / / rw,relatime shared:1 - ext4 /dev/sda1 rw\n"
        "30 22 0:40 / /srv rw shared:2 - nfs4 server:/export rw\n"
        "31 30 0:41 / /srv/local\\040disk rw shared:3 - tmpfs tmpfs rw\n"
        "32 22 0:42 / /srv2 rw - fuse.sshfs host:/ rw\n"
    )

    def of(path: str) -> str | None:
        return filesystem_of(path, str(info))

    assert of("/home/someone") == "ext4"
    assert of("/srv/data") == "nfs4"
    assert of("/srv/local disk/x") == "tmpfs"
    assert of("/srv2") == "fuse.sshfs"
    assert of("/srvx") == "ext4"
    assert filesystem_of("/", str(tmp_path / "absent")) is None


async def test_after_an_overflow_every_file_is_read_again(tmp_path: Path) -> None:
    """Which files an overflowed queue lost is not known: the pass reads them all, so an
    edit that kept size and mtime is indexed even then."""
    watch, notifier = fake_watch()
    memory = memory_with(tmp_path, watch)
    try:
        ws = workspace(tmp_path / "home")
        target = ws / "MEMORY.md"
        stamp = target.stat().st_mtime - 3600  # settled: the stat check would trust it
        os.utime(target, (stamp, stamp))
        await memory.index_workspace(AGENT)
        before = target.stat()
        target.write_text("# Work\nWorks at Zeta Rockets on telemetry.\n")  # same size
        os.utime(target, ns=(before.st_atime_ns, before.st_mtime_ns))
        notifier.pending.append(Event(-1, IN_Q_OVERFLOW, 0, ""))
        report = await memory.index_workspace(AGENT)
        assert report.sources_changed == 1
        assert any("Zeta" in t for t in await texts(memory, "Zeta telemetry"))
    finally:
        await memory.aclose()
