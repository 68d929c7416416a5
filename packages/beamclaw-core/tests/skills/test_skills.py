from __future__ import annotations

import sys
from pathlib import Path

import pytest

from beamclaw_core.skills import (
    PROMOTION_THRESHOLD,
    InstallerCommands,
    Skill,
    SkillInstaller,
    SkillParseError,
    SkillSource,
    SubprocessRunner,
    build_skills_section,
    bundled_skills_dir,
    check_eligibility,
    discover_skills,
    eligible_skills,
    match_score,
    parse_skill,
)
from beamclaw_tools import NetworkPolicy

FULL = """---
name: weather
description: Current weather and forecasts for any city
homepage: https://wttr.in
metadata: {"openclaw": {"emoji": "☔", "requires": {"bins": ["curl"], "env": ["WX_KEY"],
  "os": ["macos", "Linux"]}, "install": [{"kind": "brew", "formula": "curl"}]}}
---
# Weather

Run `{baseDir}/scripts/wx.sh <city>`.
"""


def write_skill(
    root: Path,
    directory: str,
    name: str,
    description: str = "d",
    extra: str = "",
    body: str = "body",
) -> Path:
    path = root / directory / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n{extra}---\n{body}\n")
    return path


# ------------------------------------------------------------------ parsing
def test_parse_full_frontmatter(tmp_path: Path) -> None:
    skill = parse_skill(FULL, tmp_path / "weather" / "SKILL.md")
    assert skill.name == "weather"
    assert skill.homepage == "https://wttr.in"
    meta = skill.metadata
    assert meta.emoji == "☔"
    assert meta.requires.bins == ("curl",)
    assert meta.requires.env == ("WX_KEY",)
    assert meta.requires.os == ("darwin", "linux")  # real OS names
    assert meta.install[0].kind == "brew"
    assert meta.install[0].package == "curl"
    assert skill.content() == f"# Weather\n\nRun `{tmp_path / 'weather'}/scripts/wx.sh <city>`.\n"


def test_parse_yaml_metadata_and_top_level_always() -> None:
    skill = parse_skill(
        "---\nname: a\ndescription: b\nalways: true\nmetadata:\n  emoji: x\n"
        "  requires:\n    bins: git\n---\ntext"
    )
    assert skill.metadata.always
    assert skill.metadata.emoji == "x"
    assert skill.metadata.requires.bins == ("git",)
    assert skill.content() == "text\n"  # no path: no substitution


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("no frontmatter", "missing frontmatter"),
        ("---\nname: a\ndescription: b\n", "unterminated"),
        ("---\nname: [unclosed\n---\n", "malformed YAML"),
        ("---\n- a list\n---\n", "mapping"),
        ("---\ndescription: b\n---\n", "needs a 'name'"),
        ("---\nname: a\n---\n", "needs a 'description'"),
        ("---\nname: ../evil\ndescription: b\n---\n", "letters, digits"),
        ("---\nname: a\ndescription: b\nmetadata: {requires: {os: [beos]}}\n---\n", "beos"),
        ("---\nname: a\ndescription: b\nmetadata: '{not json'\n---\n", "metadata"),
        ("---\nname: a\ndescription: b\nmetadata: {install: [{kind: snap}]}\n---\n", "install"),
    ],
)
def test_malformed_skills_raise_with_reason(text: str, reason: str) -> None:
    with pytest.raises(SkillParseError) as info:
        parse_skill(text)
    assert reason in info.value.reason


# ------------------------------------------------------------------ discovery
def test_discovery_precedence_and_skips(beamclaw_home: Path, tmp_path: Path) -> None:
    bundled = tmp_path / "bundled"
    write_skill(bundled, "one", "one", "bundled one")
    write_skill(bundled, "two", "two", "bundled two")
    write_skill(beamclaw_home / "skills", "two-global", "two", "global two")
    write_skill(beamclaw_home / "skills", "three", "three", "global three")
    agent_dir = beamclaw_home / "agents" / "ada" / "skills"
    write_skill(agent_dir, "three", "three", "agent three")
    (agent_dir / "broken").mkdir()
    (agent_dir / "broken" / "SKILL.md").write_text("---\nname: x\n")
    (agent_dir / "no-skill-file").mkdir()
    found = discover_skills("ada", bundled_dir=bundled)
    assert {s.name: s.description for s in found.skills} == {
        "one": "bundled one",
        "two": "global two",
        "three": "agent three",
    }
    assert {s.name: s.source for s in found.skills} == {
        "one": SkillSource.BUNDLED,
        "two": SkillSource.GLOBAL,
        "three": SkillSource.AGENT,
    }
    assert [s.description for s in found.overridden] == ["bundled two", "global three"]
    (skip,) = found.skipped
    assert skip.path == agent_dir / "broken" / "SKILL.md"
    assert "unterminated" in skip.reason
    other = discover_skills("bob", bundled_dir=bundled)
    assert other.get("three") is not None
    assert other.get("three").description == "global three"  # type: ignore[union-attr]


def test_bundled_skills_parse_and_work_offline() -> None:
    found = discover_skills(None)
    names = [s.name for s in found.skills]
    assert {"git", "memory-keeper", "json-wrangling"} <= set(names)
    assert found.skipped == ()
    for skill in found.skills:
        assert skill.path is not None
        assert skill.path.is_relative_to(bundled_skills_dir())
        assert not skill.metadata.requires.env  # nothing needs a network account
    git = found.get("git")
    assert git is not None
    assert f"{git.base_dir}/scripts/repo-summary.sh" in git.content()
    assert (git.base_dir / "scripts" / "repo-summary.sh").is_file()  # type: ignore[operator]


# ------------------------------------------------------------------ eligibility
def test_eligibility_bins_env_os(tmp_path: Path) -> None:
    skill = parse_skill(FULL, tmp_path / "w" / "SKILL.md")
    have = {"curl": "/usr/bin/curl"}
    ok = check_eligibility(skill, which=have.get, environ={"WX_KEY": "k"}, os_name="linux")
    assert ok.eligible
    assert ok.reasons == ()
    bad = check_eligibility(skill, which=lambda _: None, environ={}, os_name="windows")
    assert not bad.eligible
    assert bad.reasons == (
        "runs on darwin, linux, not windows",
        "missing programs: curl",
        "missing environment variables: WX_KEY",
    )
    assert check_eligibility(
        skill, which=have.get, environ={"WX_KEY": "k"}, os_name="macOS"
    ).eligible
    any_bins = parse_skill(
        "---\nname: a\ndescription: b\nmetadata: {requires: {anyBins: [podman, docker]}}\n---\n"
    )
    assert check_eligibility(any_bins, which={"docker": "/d"}.get).eligible
    assert not check_eligibility(any_bins, which=lambda _: None).eligible
    good, refused = eligible_skills(
        [skill, any_bins], which=lambda _: None, environ={}, os_name="linux"
    )
    assert good == []
    assert [r.skill.name for r in refused] == ["weather", "a"]


# ------------------------------------------------------------------ prompt
def skill(name: str, description: str, always: bool = False) -> Skill:
    return parse_skill(
        f"---\nname: {name}\ndescription: {description}\nalways: {always}\n---\n"
        f"FULL BODY OF {name}\n"
    )


SKILLS = [
    skill("git", "Inspect local repositories, commits, branches and diffs"),
    skill("weather", "Current weather and forecasts for cities"),
    skill("memory", "Keep long-term memory", always=True),
]


def test_always_full_others_listed_without_a_match() -> None:
    section = build_skills_section(SKILLS, "hello there")
    assert section.full == ("memory",)
    assert section.promoted is None
    assert section.listed == ("git", "weather")
    assert "FULL BODY OF memory" in section.text
    assert "FULL BODY OF git" not in section.text
    assert "- git: Inspect local repositories" in section.text


def test_best_match_promoted_above_list() -> None:
    section = build_skills_section(SKILLS, "What's the weather forecast in Lyon?")
    assert section.promoted == "weather"
    assert section.full == ("memory", "weather")
    assert section.listed == ("git",)
    text = section.text
    assert text.index("FULL BODY OF weather") < text.index("Other available skills")


def test_scoring_and_threshold() -> None:
    git, weather, _ = SKILLS
    assert match_score(git, "please show git history") == 3  # named
    assert match_score(git, "list the branches and commits of these repositories") == 3
    assert match_score(weather, "forecasts") == 1
    assert PROMOTION_THRESHOLD == 3
    # two description keywords are below the threshold: listed, not promoted
    assert build_skills_section(SKILLS, "commits and branches").promoted is None
    assert build_skills_section(SKILLS, "commits, branches, diffs").promoted == "git"
    assert build_skills_section(SKILLS, "commits and branches", threshold=2).promoted == "git"
    assert build_skills_section([], "git").text == ""


# ------------------------------------------------------------------ installer
def failing(script: str) -> tuple[str, ...]:
    return ("sh", "-c", script)


async def test_install_failure_reports_exit_status_and_output(tmp_path: Path) -> None:
    text = (
        "---\nname: tool\ndescription: d\nmetadata:\n  install:\n"
        "    - {kind: apt, package: nonexistent-pkg-xyz}\n"
        "    - {kind: pip, package: also-missing}\n---\n"
    )
    target = parse_skill(text)
    commands = InstallerCommands(
        apt=failing('echo "E: Unable to locate package $0" >&2; exit 100'),
        pip=failing('echo "ERROR: No matching distribution found for $0"; exit 1'),
    )
    installer = SkillInstaller(SubprocessRunner(tmp_path), commands=commands, os_name="linux")
    report = await installer.install(target)
    assert not report.ok
    first, second = report.attempts
    assert first.exit_status == 100
    assert "Unable to locate package nonexistent-pkg-xyz" in first.output
    assert second.exit_status == 1
    assert "also-missing" in second.output
    described = report.describe()
    assert "apt nonexistent-pkg-xyz: failed (exit status 100)" in described
    assert "E: Unable to locate package nonexistent-pkg-xyz" in described


async def test_install_stops_at_first_success_and_skips(tmp_path: Path) -> None:
    text = (
        "---\nname: tool\ndescription: d\nmetadata:\n  install:\n"
        "    - {kind: brew, formula: thing, os: [darwin]}\n"
        "    - {kind: npm, package: thing}\n"
        "    - {kind: pip, package: thing}\n"
        "    - {kind: apt, package: thing}\n---\n"
    )
    marker = tmp_path / "installed"
    commands = InstallerCommands(
        npm=("definitely-not-installed-npm-xyz", "install"),
        pip=failing(f'echo "installed $0" > {marker}; echo ok'),
    )
    installer = SkillInstaller(SubprocessRunner(tmp_path), commands=commands, os_name="linux")
    report = await installer.install(parse_skill(text))
    assert report.ok
    assert [a.skipped is not None for a in report.attempts] == [True, True, False]
    assert "for darwin, not linux" in (report.attempts[0].skipped or "")
    assert "is not installed" in (report.attempts[1].skipped or "")
    assert marker.read_text() == "installed thing\n"
    missing = await installer.install(parse_skill(text), spec_key="snap")
    assert not missing.ok
    assert "no install spec 'snap'" in (missing.message or "")


async def test_install_timeout_is_reported(tmp_path: Path) -> None:
    text = "---\nname: t\ndescription: d\nmetadata: {install: [{kind: pip, package: p}]}\n---\n"
    installer = SkillInstaller(
        SubprocessRunner(tmp_path),
        commands=InstallerCommands(pip=failing("echo started; sleep 30")),
        timeout_seconds=0.5,
        os_name="linux",
    )
    report = await installer.install(parse_skill(text))
    (attempt,) = report.attempts
    assert not attempt.ok
    assert attempt.timed_out
    assert "started" in attempt.output
    assert "failed (timed out)" in report.describe()


async def test_download_success_and_failures(tmp_path: Path, http_file_server: str) -> None:
    base = http_file_server
    port = int(base.rsplit(":", 1)[1])
    ok_text = (
        "---\nname: dl\ndescription: d\nmetadata:\n  install:\n"
        f"    - {{kind: download, url: '{base}/tool.sh', bins: [tool]}}\n---\n"
    )
    policy = NetworkPolicy.from_config(False, [f"127.0.0.1:{port}"])
    installer = SkillInstaller(download_dir=tmp_path / "dl", network=policy)
    report = await installer.install(parse_skill(ok_text))
    assert report.ok, report.describe()
    saved = tmp_path / "dl" / "dl" / "tool.sh"
    assert saved.read_text() == "#!/bin/sh\necho tool\n"
    assert saved.stat().st_mode & 0o111
    missing = ok_text.replace("/tool.sh", "/missing.sh")
    report = await installer.install(parse_skill(missing))
    assert not report.ok
    assert "HTTP 404" in report.describe()
    bad_sum = ok_text.replace("bins: [tool]", "sha256: '" + "0" * 64 + "'")
    report = await installer.install(parse_skill(bad_sum))
    assert "sha256 mismatch" in report.describe()
    refused = await SkillInstaller(download_dir=tmp_path / "dl").install(parse_skill(ok_text))
    assert not refused.ok
    assert "loopback" in refused.describe()


def test_default_pip_command_uses_this_interpreter() -> None:
    assert InstallerCommands().pip[0] == sys.executable
