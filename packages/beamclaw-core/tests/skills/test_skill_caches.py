"""SkillCatalog, EligibilityCache and SkillsRenderer: reused while unchanged, never stale."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from beamclaw_core.skills import (
    EligibilityCache,
    Skill,
    SkillCatalog,
    SkillsRenderer,
    build_skills_section,
    discover_skills,
    parse_skill,
)
from beamclaw_core.workspace import CacheMiss, InvalidAgentNameError

HOUR_NS = 3_600 * 1_000_000_000


def _later() -> int:
    """A clock an hour ahead: every file and directory on disk looks settled."""
    return time.time_ns() + HOUR_NS


def _skill_text(name: str, description: str = "does things", body: str = "BODY") -> str:
    return f"---\nname: {name}\ndescription: {description}\n---\n{body}\n"


def _write_skill(root: Path, name: str, **kw: str) -> Path:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_skill_text(name, **kw), encoding="utf-8")
    return path


def _names(skills: tuple[Skill, ...]) -> list[str]:
    return [s.name for s in skills]


def _body(skills: tuple[Skill, ...], name: str) -> str:
    return next(s.body for s in skills if s.name == name)


# ------------------------------------------------------------------ catalog
def test_unchanged_skills_are_the_same_tuple(beamclaw_home: Path) -> None:
    _write_skill(beamclaw_home / "agents" / "default" / "skills", "mine")
    catalog = SkillCatalog(clock=_later)
    first = catalog.skills("default")
    assert "mine" in _names(first)
    assert catalog.skills("default") is first
    assert catalog.skills("default", cached_only=True) is first
    assert first == discover_skills("default").skills


def test_an_in_place_edit_is_seen_even_with_size_and_mtime_unchanged(beamclaw_home: Path) -> None:
    path = _write_skill(beamclaw_home / "skills", "shared", body="OLD!")
    catalog = SkillCatalog(clock=_later)
    assert _body(catalog.skills("default"), "shared") == "OLD!\n"
    before = path.stat()
    time.sleep(0.02)  # let the coarse ctime clock tick
    path.write_text(_skill_text("shared", body="NEW!"), encoding="utf-8")
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    with pytest.raises(CacheMiss):
        catalog.skills("default", cached_only=True)
    assert _body(catalog.skills("default"), "shared") == "NEW!\n"


def test_added_and_removed_skills_are_seen_at_the_next_call(beamclaw_home: Path) -> None:
    root = beamclaw_home / "agents" / "default" / "skills"
    root.mkdir(parents=True)
    catalog = SkillCatalog(clock=_later)
    bundled = _names(catalog.skills("default"))
    _write_skill(root, "added")
    assert "added" in _names(catalog.skills("default"))
    # a SKILL.md appearing in an existing directory does not change the listed directory
    (root / "later").mkdir()
    assert _names(catalog.skills("default")) == sorted([*bundled, "added"])
    _write_skill(root, "later")
    assert "later" in _names(catalog.skills("default"))
    (root / "added" / "SKILL.md").unlink()
    assert "added" not in _names(catalog.skills("default"))
    (root / "later" / "SKILL.md").unlink()
    (root / "later").rmdir()
    assert _names(catalog.skills("default")) == bundled


def test_a_skills_directory_created_later_is_seen(beamclaw_home: Path) -> None:
    catalog = SkillCatalog(clock=_later)
    assert "global-one" not in _names(catalog.skills("default"))
    _write_skill(beamclaw_home / "skills", "global-one")  # creates $BEAMCLAW_HOME/skills
    assert "global-one" in _names(catalog.skills("default"))


def test_a_skill_changed_within_the_racy_window_is_parsed_every_time(beamclaw_home: Path) -> None:
    catalog = SkillCatalog()  # the real clock: the file was written just now
    path = _write_skill(beamclaw_home / "skills", "fresh", body="one")
    assert _body(catalog.skills("default"), "fresh") == "one\n"
    with pytest.raises(CacheMiss):  # too young to trust its timestamps
        catalog.skills("default", cached_only=True)
    path.write_text(_skill_text("fresh", body="two"), encoding="utf-8")  # same size
    assert _body(catalog.skills("default"), "fresh") == "two\n"


def test_the_home_and_the_agent_select_the_directories(tmp_path: Path) -> None:
    catalog = SkillCatalog(clock=_later)
    _write_skill(tmp_path / "a" / "agents" / "x" / "skills", "only-a")
    assert "only-a" in _names(catalog.skills("x", tmp_path / "a"))
    assert "only-a" not in _names(catalog.skills("x", tmp_path / "b"))
    assert "only-a" not in _names(catalog.skills("y", tmp_path / "a"))
    with pytest.raises(InvalidAgentNameError):
        catalog.skills("../a", tmp_path)


def test_beamclaw_home_is_read_at_each_call(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    catalog = SkillCatalog(clock=_later)
    _write_skill(tmp_path / "one" / "skills", "in-one")
    monkeypatch.setenv("BEAMCLAW_HOME", str(tmp_path / "one"))
    assert "in-one" in _names(catalog.skills("default"))
    monkeypatch.setenv("BEAMCLAW_HOME", str(tmp_path / "two"))
    assert "in-one" not in _names(catalog.skills("default"))


# ------------------------------------------------------------------ eligibility
NEEDS_TOOL = parse_skill(
    "---\nname: tool-user\ndescription: d\nmetadata: {requires: {bins: [bctool]}}\n---\n"
)
NEEDS_KEY = parse_skill(
    "---\nname: key-user\ndescription: d\nmetadata: {requires: {env: [BC_TEST_KEY]}}\n---\n"
)
PLAIN = parse_skill("---\nname: plain\ndescription: d\n---\n")


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_a_program_appearing_or_vanishing_counts_within_the_recheck_interval() -> None:
    programs: dict[str, str] = {}
    clock = FakeClock()
    cache = EligibilityCache(1.0, clock=clock, which=programs.get, environ={"PATH": "/bin"})
    skills = (NEEDS_TOOL, PLAIN)
    assert cache.eligible(skills) == (PLAIN,)
    programs["bctool"] = "/bin/bctool"
    clock.now += 0.5
    assert cache.eligible(skills) == (PLAIN,)  # trusted for up to a second
    clock.now += 0.5
    assert cache.eligible(skills) == (NEEDS_TOOL, PLAIN)
    del programs["bctool"]
    clock.now += 1.0
    assert cache.eligible(skills) == (PLAIN,)


def test_path_and_required_variables_count_at_the_next_call() -> None:
    programs: dict[str, str] = {}
    env = {"PATH": "/bin"}
    cache = EligibilityCache(3_600.0, clock=FakeClock(), which=programs.get, environ=env)
    skills = (NEEDS_KEY, NEEDS_TOOL)
    assert cache.eligible(skills) == ()
    env["BC_TEST_KEY"] = "k"
    assert cache.eligible(skills) == (NEEDS_KEY,)
    programs["bctool"] = "/opt/bin/bctool"
    env["PATH"] = "/opt/bin:/bin"
    assert cache.eligible(skills) == (NEEDS_KEY, NEEDS_TOOL)
    env["BC_TEST_KEY"] = ""
    assert cache.eligible(skills) == (NEEDS_TOOL,)


def test_real_path_lookups(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = FakeClock()
    cache = EligibilityCache(clock=clock)
    skills = (NEEDS_TOOL,)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    monkeypatch.setenv("PATH", str(bin_dir))
    assert cache.eligible(skills) == ()
    program = bin_dir / "bctool"
    program.write_text("#!/bin/sh\n", encoding="utf-8")
    program.chmod(0o755)
    clock.now += 1.0
    assert cache.eligible(skills) == skills
    monkeypatch.setenv("PATH", str(tmp_path))  # a new PATH counts at once
    assert cache.eligible(skills) == ()


def test_an_unchanged_verdict_is_the_same_tuple() -> None:
    clock = FakeClock()
    cache = EligibilityCache(clock=clock, which=lambda _: None, environ={})
    skills = (NEEDS_TOOL, PLAIN)
    first = cache.eligible(skills)
    clock.now += 5.0  # looked up again, same answer
    assert cache.eligible(skills) is first


# ------------------------------------------------------------------ renderer
def test_the_renderer_matches_build_skills_section_for_every_message() -> None:
    skills = [
        parse_skill(_skill_text("git", "Inspect repositories, commits and branches")),
        parse_skill(_skill_text("weather", "Forecasts for cities")),
        parse_skill("---\nname: memo\ndescription: memory\nalways: true\n---\nM\n"),
    ]
    renderer = SkillsRenderer(skills)
    messages = [
        None,
        "",
        "hello",
        "git please",
        "weather in Paris",
        "git please",
        "commits branches",
    ]
    for message in messages:
        assert renderer.section(message) == build_skills_section(skills, message)
    assert renderer.section("git please") is renderer.section("git please")
    assert SkillsRenderer([]).section("git").text == ""
