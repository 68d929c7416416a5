"""Agent workspaces on disk: templates, name rules, protection, rehatch."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from beamclaw_core.workspace import (
    BOOTSTRAP_FILES,
    DEFAULT_AGENT,
    AgentExistsError,
    AgentNotFoundError,
    BootstrapFile,
    InvalidAgentNameError,
    ProtectedAgentError,
    WorkspaceError,
    agent_dir,
    agent_exists,
    create_agent,
    default_template,
    delete_agent,
    ensure_agent,
    is_valid_agent_name,
    list_agents,
    rehatch_agent,
    show_agent,
    validate_agent_name,
)


def test_create_writes_every_template_and_directories(beamclaw_home: Path) -> None:
    summary = create_agent("scout")
    workspace = beamclaw_home / "agents" / "scout"
    assert summary.path == workspace
    assert {p.name for p in workspace.iterdir()} == {f.value for f in BOOTSTRAP_FILES} | {
        "memory",
        "skills",
    }
    for file in BOOTSTRAP_FILES:
        content = (workspace / file.value).read_text(encoding="utf-8")
        assert content == default_template(file, "scout")
        assert content.startswith(f"# {file.value}")
        assert "${" not in content
    assert "scout" in (workspace / "IDENTITY.md").read_text(encoding="utf-8")
    assert summary.files == BOOTSTRAP_FILES
    assert summary.hatched is False
    assert summary.skills == ()


def test_templates_are_substantial() -> None:
    for file in BootstrapFile:
        text = default_template(file, "x")
        assert len(text) > 150, file


def test_create_twice_is_refused() -> None:
    create_agent("twice")
    with pytest.raises(AgentExistsError) as info:
        create_agent("twice")
    assert info.value.agent == "twice"


def test_create_leaves_no_staging_directory(beamclaw_home: Path) -> None:
    create_agent("clean")
    assert [p.name for p in (beamclaw_home / "agents").iterdir()] == ["clean"]


@pytest.mark.parametrize(
    "name",
    ["default", "a", "bob", "my-agent", "agent_2", "0day", "x" * 64],
)
def test_valid_names(name: str) -> None:
    assert validate_agent_name(name) == name
    assert is_valid_agent_name(name)


@pytest.mark.parametrize(
    ("name", "reason"),
    [
        ("", "empty"),
        ("x" * 65, "longer than 64"),
        ("Bob", "lowercase"),
        ("-rf", "start with"),
        ("_x", "start with"),
        (".hidden", "start with"),
        ("../etc", "start with"),
        ("a/b", "only lowercase"),
        ("a b", "only lowercase"),
        ("caf\u00e9", "only lowercase"),
        ("\u00e9t\u00e9", "start with"),
        ("con", "reserved"),
        ("com1", "reserved"),
    ],
)
def test_invalid_names(name: str, reason: str) -> None:
    with pytest.raises(InvalidAgentNameError) as info:
        validate_agent_name(name)
    assert reason in info.value.reason
    assert not is_valid_agent_name(name)
    with pytest.raises(InvalidAgentNameError):
        create_agent(name)


def test_invalid_name_never_builds_a_path_outside_agents() -> None:
    with pytest.raises(InvalidAgentNameError):
        agent_dir("../../etc")


def test_default_is_protected_from_deletion(beamclaw_home: Path) -> None:
    create_agent(DEFAULT_AGENT)
    with pytest.raises(ProtectedAgentError) as info:
        delete_agent(DEFAULT_AGENT)
    assert isinstance(info.value, WorkspaceError)
    assert (beamclaw_home / "agents" / "default" / "SOUL.md").is_file()


def test_delete_removes_the_workspace() -> None:
    create_agent("temp")
    (agent_dir("temp") / "memory" / "2026-01-01.md").write_text("note", encoding="utf-8")
    delete_agent("temp")
    assert not agent_exists("temp")
    assert list_agents() == ()


def test_delete_missing_agent() -> None:
    with pytest.raises(AgentNotFoundError):
        delete_agent("ghost")


def test_list_is_sorted_and_ignores_foreign_directories(beamclaw_home: Path) -> None:
    create_agent("zeta")
    create_agent("alpha")
    (beamclaw_home / "agents" / ".creating-x-1234").mkdir()
    (beamclaw_home / "agents" / "Not Valid").mkdir()
    (beamclaw_home / "agents" / "stray.txt").write_text("x", encoding="utf-8")
    assert [a.name for a in list_agents()] == ["alpha", "zeta"]


def test_list_without_agents_directory() -> None:
    assert list_agents() == ()


def test_show_reports_files_skills_and_logs() -> None:
    create_agent("shown")
    workspace = agent_dir("shown")
    (workspace / "BOOTSTRAP.md").unlink()
    (workspace / "skills" / "weather").mkdir()
    (workspace / "skills" / "weather" / "SKILL.md").write_text("---\nname: weather\n---\n")
    (workspace / "skills" / "empty-dir").mkdir()
    (workspace / "memory" / "2026-11-21.md").write_text("a", encoding="utf-8")
    (workspace / "memory" / "2026-11-20.md").write_text("b", encoding="utf-8")
    (workspace / "memory" / "notes.md").write_text("not a daily log", encoding="utf-8")
    details = show_agent("shown")
    assert details.summary.hatched is True
    assert details.summary.skills == ("weather",)
    assert details.summary.daily_logs == 2
    assert [d.isoformat() for d in details.daily_log_dates] == ["2026-11-20", "2026-11-21"]
    by_file = {f.file: f for f in details.files}
    assert by_file[BootstrapFile.BOOTSTRAP].content is None
    assert by_file[BootstrapFile.BOOTSTRAP].size_bytes == 0
    assert by_file[BootstrapFile.SOUL].content == default_template(BootstrapFile.SOUL, "shown")
    assert [f.file for f in details.files] == list(BOOTSTRAP_FILES)


def test_show_missing_agent() -> None:
    with pytest.raises(AgentNotFoundError):
        show_agent("ghost")


def test_ensure_creates_once_and_keeps_edits() -> None:
    first = ensure_agent(DEFAULT_AGENT)
    soul = first.path / "SOUL.md"
    soul.write_text("custom soul", encoding="utf-8")
    ensure_agent(DEFAULT_AGENT)
    assert soul.read_text(encoding="utf-8") == "custom soul"


def _populate(name: str) -> Path:
    create_agent(name)
    workspace = agent_dir(name)
    for file in BOOTSTRAP_FILES:
        (workspace / file.value).write_text(f"edited {file.value}", encoding="utf-8")
    (workspace / "skills" / "weather").mkdir()
    (workspace / "skills" / "weather" / "SKILL.md").write_text("skill body", encoding="utf-8")
    (workspace / "memory" / "2026-11-21.md").write_text("yesterday's log", encoding="utf-8")
    (workspace / "notes.txt").write_text("user file", encoding="utf-8")
    return workspace


def test_rehatch_resets_self_keeps_skills_memory_and_person() -> None:
    workspace = _populate("phoenix")
    now = datetime(2026, 11, 22, 10, 30, tzinfo=UTC)
    result = rehatch_agent("phoenix", now=now)
    for file in (
        BootstrapFile.IDENTITY,
        BootstrapFile.SOUL,
        BootstrapFile.TOOLS,
        BootstrapFile.AGENTS,
        BootstrapFile.BOOTSTRAP,
    ):
        assert (workspace / file.value).read_text() == default_template(file, "phoenix")
        assert file in result.reset
    for file in (BootstrapFile.USER, BootstrapFile.MEMORY, BootstrapFile.HEARTBEAT):
        assert (workspace / file.value).read_text() == f"edited {file.value}"
    assert (workspace / "skills" / "weather" / "SKILL.md").read_text() == "skill body"
    assert (workspace / "memory" / "2026-11-21.md").read_text() == "yesterday's log"
    assert (workspace / "notes.txt").read_text() == "user file"
    assert {"skills/", "memory/", "USER.md", "MEMORY.md", "notes.txt"} <= set(result.kept)
    assert result.archive is not None
    assert result.archive.parent == workspace / "archive"
    assert result.archive.name.startswith("rehatch-20261122T103000")
    assert (result.archive / "SOUL.md").read_text() == "edited SOUL.md"
    assert not (result.archive / "USER.md").exists()


def test_rehatch_full_resets_person_files_but_still_keeps_skills_and_memory() -> None:
    workspace = _populate("full")
    result = rehatch_agent("full", full=True, now=datetime(2026, 1, 1, tzinfo=UTC))
    for file in BOOTSTRAP_FILES:
        assert (workspace / file.value).read_text() == default_template(file, "full")
    assert set(result.reset) == set(BOOTSTRAP_FILES)
    assert (workspace / "skills" / "weather" / "SKILL.md").is_file()
    assert (workspace / "memory" / "2026-11-21.md").is_file()
    assert result.archive is not None
    assert (result.archive / "MEMORY.md").read_text() == "edited MEMORY.md"


def test_rehatch_of_untouched_agent_archives_nothing() -> None:
    create_agent(DEFAULT_AGENT)
    result = rehatch_agent(DEFAULT_AGENT, now=datetime(2026, 1, 1, tzinfo=UTC))
    assert result.archive is None
    assert not (agent_dir(DEFAULT_AGENT) / "archive").exists()


def test_rehatch_restores_deleted_bootstrap_and_directories() -> None:
    create_agent("reborn")
    workspace = agent_dir("reborn")
    (workspace / "BOOTSTRAP.md").unlink()
    (workspace / "skills").rmdir()
    assert show_agent("reborn").summary.hatched
    rehatch_agent("reborn", now=datetime(2026, 1, 1, tzinfo=UTC))
    assert (workspace / "BOOTSTRAP.md").is_file()
    assert (workspace / "skills").is_dir()
    assert not show_agent("reborn").summary.hatched


def test_rehatch_missing_agent() -> None:
    with pytest.raises(AgentNotFoundError):
        rehatch_agent("ghost")


def test_hand_made_directory_with_a_looser_name_is_usable(beamclaw_home: Path) -> None:
    legacy = beamclaw_home / "agents" / "Legacy.Agent"
    legacy.mkdir(parents=True)
    (legacy / "SOUL.md").write_text("old soul", encoding="utf-8")
    assert [a.name for a in list_agents()] == ["Legacy.Agent"]
    assert show_agent("Legacy.Agent").summary.files == (BootstrapFile.SOUL,)
    with pytest.raises(InvalidAgentNameError):
        create_agent("Other.Agent")
    delete_agent("Legacy.Agent")
    assert not legacy.exists()
