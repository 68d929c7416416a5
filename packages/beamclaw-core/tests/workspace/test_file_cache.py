"""FileTextCache: texts reused while ``stat`` is unchanged, never a missed change."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from beamclaw_core.workspace import CacheMiss, FileTextCache

HOUR_NS = 3_600 * 1_000_000_000


def _later() -> int:
    """A clock an hour ahead: every file on disk looks settled to the cache."""
    return time.time_ns() + HOUR_NS


def _write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_cached_needs_a_read_first_then_answers_without_one(tmp_path: Path) -> None:
    cache = FileTextCache(clock=_later)
    path = _write(tmp_path / "MEMORY.md", "remember the milk")
    with pytest.raises(CacheMiss) as caught:
        cache.cached(path)
    assert caught.value.path == path
    assert cache.read(path) == "remember the milk"
    assert cache.cached(path) == "remember the milk"
    assert cache.cached(path) is cache.read(path)


def test_absent_blank_and_directory_paths_are_none_without_a_read(tmp_path: Path) -> None:
    cache = FileTextCache(clock=_later)
    blank = _write(tmp_path / "blank.md", " \n\t\n")
    assert cache.cached(tmp_path / "missing.md") is None
    assert cache.cached(tmp_path) is None
    assert cache.read(blank) is None
    assert cache.cached(blank) is None


def test_an_edit_is_seen_even_with_the_same_size_and_mtime(tmp_path: Path) -> None:
    cache = FileTextCache(clock=_later)
    path = _write(tmp_path / "USER.md", "Name: Ann")
    before = path.stat()
    assert cache.read(path) == "Name: Ann"
    time.sleep(0.02)  # let the coarse ctime clock tick
    _write(path, "Name: Bob")  # same size, and the mtime set back: the ctime still moves
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(CacheMiss):
        cache.cached(path)
    assert cache.read(path) == "Name: Bob"


def test_a_replaced_or_deleted_file_is_seen(tmp_path: Path) -> None:
    cache = FileTextCache(clock=_later)
    path = _write(tmp_path / "SOUL.md", "calm")
    assert cache.read(path) == "calm"
    _write(tmp_path / "next.md", "wild").replace(path)
    assert cache.read(path) == "wild"
    path.unlink()
    assert cache.cached(path) is None
    assert cache.read(path) is None


def test_a_file_changed_within_the_racy_window_is_read_every_time(tmp_path: Path) -> None:
    cache = FileTextCache()  # the real clock: the file was written just now
    path = _write(tmp_path / "memory.md", "first")
    assert cache.read(path) == "first"
    with pytest.raises(CacheMiss):  # too young to trust its timestamps
        cache.cached(path)
    _write(path, "other")  # same size, possibly within the same timestamp tick
    assert cache.read(path) == "other"


def test_clear_forgets_every_entry(tmp_path: Path) -> None:
    cache = FileTextCache(clock=_later)
    path = _write(tmp_path / "TOOLS.md", "hammer")
    assert cache.read(path) == "hammer"
    cache.clear()
    with pytest.raises(CacheMiss):
        cache.cached(path)
