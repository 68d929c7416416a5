"""System prompt assembly: order, truncation, daily logs, environment block."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from beamclaw_core.messages import Role
from beamclaw_core.workspace import (
    ENVIRONMENT_HEADER,
    MAX_FILE_BYTES,
    TRUNCATION_MARKER,
    BootstrapFile,
    InvalidAgentNameError,
    SectionKind,
    agent_dir,
    build_system_prompt,
    build_system_prompt_async,
    create_agent,
    daily_log_path,
)

NOW = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)


def _write(name: str, file: str, text: str) -> Path:
    path = agent_dir(name) / file
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def _agent_with_markers(name: str = "order") -> Path:
    create_agent(name)
    for file in BootstrapFile:
        _write(name, file.value, f"marker-{file.label}")
    return agent_dir(name)


def test_sections_follow_the_documented_order_with_memory_last() -> None:
    workspace = _agent_with_markers()
    daily_log_path(workspace, date(2026, 11, 21)).write_text("marker-yesterday")
    daily_log_path(workspace, date(2026, 11, 22)).write_text("marker-today")
    prompt = build_system_prompt(
        "order", now=NOW, last_message_at=None, skills_section="marker-skills"
    )
    text = prompt.text
    expected = [
        "marker-IDENTITY",
        "marker-SOUL",
        "marker-USER",
        "marker-TOOLS",
        "marker-AGENTS",
        "marker-BOOTSTRAP",
        "marker-skills",
        ENVIRONMENT_HEADER,
        "marker-yesterday",
        "marker-today",
        "marker-MEMORY",
    ]
    positions = [text.index(m) for m in expected]
    assert positions == sorted(positions)
    assert "marker-HEARTBEAT" not in text
    assert prompt.sections[-1].kind is SectionKind.MEMORY
    assert prompt.sections[-1].source == "MEMORY.md"
    assert prompt.sections[0].kind is SectionKind.PREAMBLE
    assert prompt.sources() == (
        "IDENTITY.md",
        "SOUL.md",
        "USER.md",
        "TOOLS.md",
        "AGENTS.md",
        "BOOTSTRAP.md",
        "memory/2026-11-21.md",
        "memory/2026-11-22.md",
        "MEMORY.md",
    )


def test_heartbeat_turns_include_heartbeat_before_bootstrap() -> None:
    _agent_with_markers("beat")
    text = build_system_prompt("beat", now=NOW, last_message_at=None, include_heartbeat=True).text
    assert text.index("marker-AGENTS") < text.index("marker-HEARTBEAT")
    assert text.index("marker-HEARTBEAT") < text.index("marker-BOOTSTRAP")


def test_missing_and_empty_files_are_skipped() -> None:
    workspace = _agent_with_markers("sparse")
    (workspace / "BOOTSTRAP.md").unlink()
    (workspace / "TOOLS.md").write_text("  \n\n", encoding="utf-8")
    prompt = build_system_prompt("sparse", now=NOW, last_message_at=None)
    assert "BOOTSTRAP.md" not in prompt.sources()
    assert "TOOLS.md" not in prompt.sources()
    assert "## TOOLS.md" not in prompt.text
    assert prompt.sections[-1].source == "MEMORY.md"


def test_memory_stays_last_even_without_skills_or_logs() -> None:
    _agent_with_markers("plain")
    prompt = build_system_prompt("plain", now=NOW, last_message_at=None)
    assert prompt.text.rstrip().endswith("marker-MEMORY")
    assert not any(s.kind is SectionKind.SKILLS for s in prompt.sections)


def test_missing_agent_uses_a_single_fallback() -> None:
    prompt = build_system_prompt("nobody", now=NOW, last_message_at=None, skills_section="S")
    assert not prompt.workspace_found
    kinds = [s.kind for s in prompt.sections]
    assert kinds == [SectionKind.FALLBACK, SectionKind.SKILLS, SectionKind.ENVIRONMENT]
    assert "beamclaw agent create nobody" in prompt.text
    assert not agent_dir("nobody").exists()


def test_bad_agent_name_is_rejected() -> None:
    with pytest.raises(InvalidAgentNameError):
        build_system_prompt("../outside", now=NOW, last_message_at=None)


def test_file_over_20kb_is_truncated_with_marker() -> None:
    create_agent("big")
    lines = [f"line {i:05d} " + "x" * 50 for i in range(1000)]  # about 62 KB
    _write("big", "MEMORY.md", "\n".join(lines))
    _write("big", "SOUL.md", "small soul")
    prompt = build_system_prompt("big", now=NOW, last_message_at=None)
    memory = prompt.sections[-1]
    assert memory.truncated
    assert TRUNCATION_MARKER in memory.text
    assert "MEMORY.md is" in memory.text
    assert lines[0] in memory.text  # head kept
    assert lines[-1] in memory.text  # tail (the newest entries) kept
    assert lines[500] not in memory.text
    body = memory.text.split("\n\n", 1)[1]
    kept = body.replace(body[body.index("\n\n" + TRUNCATION_MARKER) : body.index("]\n\n") + 3], "")
    assert len(kept.encode("utf-8")) <= MAX_FILE_BYTES
    soul = next(s for s in prompt.sections if s.source == "SOUL.md")
    assert not soul.truncated
    assert TRUNCATION_MARKER not in soul.text


def test_file_at_exactly_the_limit_is_kept_whole() -> None:
    create_agent("edge")
    text = "a" * MAX_FILE_BYTES
    _write("edge", "SOUL.md", text)
    soul = next(
        s
        for s in build_system_prompt("edge", now=NOW, last_message_at=None).sections
        if s.source == "SOUL.md"
    )
    assert not soul.truncated
    assert text in soul.text


def test_daily_logs_use_the_users_timezone() -> None:
    workspace = _agent_with_markers("tz")
    for day in ("2026-11-20", "2026-11-21", "2026-11-22"):
        (workspace / "memory" / f"{day}.md").write_text(f"log-{day}", encoding="utf-8")
    # 02:30 UTC on the 22nd is still the evening of the 21st in New York.
    now = datetime(2026, 11, 22, 2, 30, tzinfo=UTC)
    text = build_system_prompt(
        "tz", now=now, last_message_at=None, timezone="America/New_York"
    ).text
    assert "log-2026-11-20" in text
    assert "log-2026-11-21" in text
    assert "log-2026-11-22" not in text
    assert "Daily log 2026-11-21 (today)" in text
    assert "Daily log 2026-11-20 (yesterday)" in text
    # The same instant in Tokyo is already the 22nd.
    text = build_system_prompt("tz", now=now, last_message_at=None, timezone="Asia/Tokyo").text
    assert "log-2026-11-20" not in text
    assert "Daily log 2026-11-22 (today)" in text


def test_timezone_from_user_md_when_not_configured() -> None:
    workspace = _agent_with_markers("usertz")
    (workspace / "USER.md").write_text("# USER\n- **Timezone:** Asia/Tokyo\n", encoding="utf-8")
    (workspace / "memory" / "2026-11-23.md").write_text("log-tokyo-today")
    now = datetime(2026, 11, 22, 16, 0, tzinfo=UTC)  # 01:00 on the 23rd in Tokyo
    prompt = build_system_prompt("usertz", now=now, last_message_at=None)
    assert prompt.timezone.name == "Asia/Tokyo"
    assert prompt.timezone.source == "USER.md"
    assert "log-tokyo-today" in prompt.text
    assert "local_time: 2026-11-23 01:00 (Monday), Asia/Tokyo (UTC+09:00)" in prompt.text
    configured = build_system_prompt(
        "usertz", now=now, last_message_at=None, timezone="Europe/Berlin"
    )
    assert configured.timezone.name == "Europe/Berlin"
    assert configured.timezone.source == "config"


def test_environment_block_in_prompt() -> None:
    _agent_with_markers("env")
    prompt = build_system_prompt(
        "env",
        now=NOW,
        last_message_at=NOW - timedelta(hours=3, minutes=12, seconds=40),
        timezone="Europe/Berlin",
    )
    env = next(s for s in prompt.sections if s.kind is SectionKind.ENVIRONMENT)
    assert env.text == (
        "[user:environment]\n"
        "local_time: 2026-11-22 10:00 (Sunday), Europe/Berlin (UTC+01:00)\n"
        "since_last_message: 3 hours 12 minutes"
    )


def test_prompt_as_messages() -> None:
    _agent_with_markers("msgs")
    prompt = build_system_prompt("msgs", now=NOW, last_message_at=None)
    single = prompt.as_message()
    assert single.role is Role.SYSTEM
    assert single.text == prompt.text
    many = prompt.as_messages()
    assert len(many) == len(prompt.sections)
    assert all(m.role is Role.SYSTEM for m in many)
    assert many[-1].meta["source"] == "MEMORY.md"


def test_prompt_is_deterministic_and_reads_no_clock() -> None:
    _agent_with_markers("pure")
    a = build_system_prompt("pure", now=NOW, last_message_at=NOW - timedelta(days=2))
    b = build_system_prompt("pure", now=NOW, last_message_at=NOW - timedelta(days=2))
    assert a == b
    assert "since_last_message: 2 days" in a.text


def test_naive_now_is_rejected() -> None:
    _agent_with_markers("naive")
    with pytest.raises(ValueError, match="timezone-aware"):
        build_system_prompt("naive", now=datetime(2026, 1, 1), last_message_at=None)


async def test_async_variant_matches() -> None:
    _agent_with_markers("async")
    sync = build_system_prompt("async", now=NOW, last_message_at=None, timezone="Asia/Tokyo")
    result = await build_system_prompt_async(
        "async", now=NOW, last_message_at=None, timezone="Asia/Tokyo"
    )
    assert result == sync
    assert result.timezone.zone == ZoneInfo("Asia/Tokyo")
