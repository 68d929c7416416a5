"""PromptCache: the same messages as build_system_prompt, whatever changed between calls."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from beamclaw_core.messages import Message
from beamclaw_core.workspace import (
    BootstrapFile,
    FileTextCache,
    InvalidAgentNameError,
    PromptCache,
    agent_dir,
    build_system_prompt,
    create_agent,
    daily_log_path,
    read_text,
)

NOW = datetime(2026, 11, 22, 9, 0, 30, tzinfo=UTC)


def _read(path: str) -> str | None:
    return read_text(Path(path))


def _expected(agent: str, **kw: Any) -> list[Message]:
    return list(build_system_prompt(agent, **kw).as_messages())


def _check(cache: PromptCache, agent: str = "default", **kw: Any) -> list[Message]:
    """The cached messages, asserted equal to a fresh build with the same arguments."""
    got = cache.messages(agent, read=_read, **kw)
    assert got == _expected(agent, **kw)
    return got


def _write(agent: str, name: str, text: str) -> None:
    (agent_dir(agent) / name).write_text(text, encoding="utf-8")


def test_every_section_equals_a_fresh_build_as_files_change() -> None:
    create_agent("default")
    cache = PromptCache()
    base: dict[str, Any] = {"now": NOW, "last_message_at": None}
    first = _check(cache, **base)
    assert _check(cache, **base) == first
    _write("default", "MEMORY.md", "- likes green tea\n" + "x" * 30_000)  # truncated
    memory = _check(cache, **base)[-1]
    assert "likes green tea" in memory.text and "[truncated:" in memory.text
    _write("default", "USER.md", "Timezone: Asia/Tokyo\n")  # moves "today" and the clock
    log = daily_log_path(agent_dir("default"), datetime(2026, 11, 22).date())
    log.parent.mkdir(exist_ok=True)
    log.write_text("- tokyo lunch\n", encoding="utf-8")
    texts = [m.text for m in _check(cache, **base)]
    assert any("tokyo lunch" in t for t in texts)
    assert any("local_time: 2026-11-22 18:00" in t for t in texts)
    with log.open("a", encoding="utf-8") as handle:
        handle.write("- tokyo dinner\n")
    assert any("tokyo dinner" in m.text for m in _check(cache, **base))
    (agent_dir("default") / "SOUL.md").unlink()
    assert all(m.meta.get("source") != "SOUL.md" for m in _check(cache, **base))
    _check(cache, include_heartbeat=True, **base)
    _check(cache, timezone="Europe/Berlin", skills_section="## Skills\n\n- a: b\n", **base)
    _check(cache, skills_section="## Skills\n\n- c: d\n", **base)
    _check(cache, skills_section="  \n", **base)
    _check(cache, max_file_bytes=1024, **base)


def test_a_missing_workspace_gets_the_fallback_until_it_exists() -> None:
    cache = PromptCache()
    kinds = [m.meta["kind"] for m in _check(cache, now=NOW, last_message_at=None)]
    assert kinds == ["fallback", "environment"]
    create_agent("default")
    kinds = [m.meta["kind"] for m in _check(cache, now=NOW, last_message_at=None)]
    assert kinds[0] == "preamble"


def test_environment_block_follows_the_minute_and_the_time_since_the_last_message() -> None:
    create_agent("default")
    cache = PromptCache()
    last = NOW - timedelta(minutes=5, seconds=10)
    env = _check(cache, now=NOW, last_message_at=last)[-2].text
    assert "09:00" in env and "5 minutes" in env
    later = NOW + timedelta(seconds=29)  # the same UTC minute, the same block
    assert _check(cache, now=later, last_message_at=last)[-2].text == env
    later = NOW + timedelta(seconds=30)  # 09:01:00: a new minute on the clock
    env = _check(cache, now=later, last_message_at=last)[-2].text
    assert "09:01" in env and "5 minutes" in env
    later = NOW + timedelta(seconds=50)  # 09:01:20: six minutes since the last message
    env = _check(cache, now=later, last_message_at=last)[-2].text
    assert "09:01" in env and "6 minutes" in env
    moved = last + timedelta(minutes=2)
    assert "4 minutes" in _check(cache, now=later, last_message_at=moved)[-2].text
    assert "none" in _check(cache, now=later, last_message_at=None)[-2].text
    assert "just now" in _check(cache, now=later, last_message_at=later)[-2].text


def test_daily_logs_switch_at_the_users_midnight() -> None:
    create_agent("default")
    directory = agent_dir("default")
    (directory / "memory").mkdir(exist_ok=True)
    for day in (20, 21, 22):
        daily_log_path(directory, datetime(2026, 11, day).date()).write_text(
            f"- note of the {day}th\n", encoding="utf-8"
        )
    cache = PromptCache()
    zone = "America/New_York"  # UTC-5 in November
    before = datetime(2026, 11, 22, 4, 59, 30, tzinfo=UTC)  # 23:59:30 on the 21st
    texts = [m.text for m in _check(cache, now=before, last_message_at=None, timezone=zone)]
    assert any("20th" in t for t in texts) and any("21th" in t for t in texts)
    assert not any("22th" in t for t in texts)
    after = before + timedelta(seconds=31)  # 00:00:01 on the 22nd
    texts = [m.text for m in _check(cache, now=after, last_message_at=None, timezone=zone)]
    assert not any("20th" in t for t in texts)
    assert any("21th" in t for t in texts) and any("22th" in t for t in texts)


def test_offsets_with_seconds_never_share_a_minute() -> None:
    # Liberia kept UTC-0:44:30 until 1972: one UTC minute spans two local minutes there.
    create_agent("default")
    cache = PromptCache()
    zone = "Africa/Monrovia"
    first = datetime(1970, 6, 1, 12, 0, 10, tzinfo=UTC)  # 11:15:40 local
    second = first + timedelta(seconds=30)  # 11:16:10 local, same UTC minute
    assert "11:15" in _check(cache, now=first, last_message_at=None, timezone=zone)[-2].text
    assert "11:16" in _check(cache, now=second, last_message_at=None, timezone=zone)[-2].text


def test_an_unchanged_text_reuses_the_same_messages() -> None:
    create_agent("default")
    cache = PromptCache()
    texts = {str(agent_dir("default") / f.value): f"text of {f.value}" for f in BootstrapFile}
    first = cache.messages("default", now=NOW, last_message_at=None, read=texts.get)
    second = cache.messages("default", now=NOW, last_message_at=None, read=texts.get)
    assert all(a is b for a, b in zip(first, second, strict=True))
    texts[str(agent_dir("default") / "IDENTITY.md")] = "a new identity"
    third = cache.messages("default", now=NOW, last_message_at=None, read=texts.get)
    assert "a new identity" in third[1].text


def test_bad_names_and_naive_times_are_rejected() -> None:
    cache = PromptCache()
    with pytest.raises(InvalidAgentNameError):
        cache.messages("../escape", now=NOW, last_message_at=None, read=_read)
    with pytest.raises(ValueError, match="timezone-aware"):
        cache.messages("default", now=datetime(2026, 1, 1), last_message_at=None, read=_read)
    with pytest.raises(ValueError, match="timezone-aware"):
        cache.messages("default", now=NOW, last_message_at=datetime(2026, 1, 1), read=_read)


def test_the_prompt_order_lives_in_one_place() -> None:
    """Both the uncached build and the cache order their parts with ``in_prompt_order``:
    head, skills, environment, daily logs, MEMORY last; absent parts are skipped."""
    from beamclaw_core.workspace.prompt import in_prompt_order

    parts = in_prompt_order(["pre", "SOUL"], "skills", "env", ["yesterday", "today"], "MEMORY")
    assert parts == ["pre", "SOUL", "skills", "env", "yesterday", "today", "MEMORY"]
    assert in_prompt_order(["fallback"], None, "env", [], None) == ["fallback", "env"]


def test_both_builds_read_through_the_same_path_string_reader() -> None:
    """``read`` takes path strings in both builds, so one FileTextCache serves both."""
    create_agent("default")
    _write("default", "MEMORY.md", "- likes green tea\n")
    files = FileTextCache(racy_window_ns=0)  # trust what was just written
    fresh = build_system_prompt("default", now=NOW, last_message_at=None, read=files.read)
    assert list(fresh.as_messages()) == _expected("default", now=NOW, last_message_at=None)
    cached = PromptCache().messages("default", now=NOW, last_message_at=None, read=files.cached)
    assert cached == list(fresh.as_messages())
