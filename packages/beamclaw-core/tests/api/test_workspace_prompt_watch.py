"""WorkspacePrompt's kept inputs: no ``stat`` while inotify reports nothing, every change
still shown at the next call."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from beamclaw_core import WorkspacePrompt
from beamclaw_core.messages import Message
from beamclaw_core.skills import SkillCatalog
from beamclaw_core.workspace import FileTextCache, agent_dir, create_agent
from beamclaw_core.workspace.watched_inputs import Inputs, OutsideInputsError, WatchedInputs
from beamclaw_memory import ChangeWatch
from beamclaw_memory.testing import CountingNotifier
from beamclaw_tools import SessionRef

from .conftest import FakeClock, an_hour_from_now_ns

SESSION = SessionRef(session_id="s", agent_id="default")


def _prompt(watch: ChangeWatch | None = None, clock: FakeClock | None = None) -> WorkspacePrompt:
    """A prompt whose stat caches see every file as settled (no racy window)."""
    prompt = WorkspacePrompt()
    prompt.files = FileTextCache(clock=an_hour_from_now_ns)
    prompt.skill_files = SkillCatalog(clock=an_hour_from_now_ns)
    prompt.inputs = WatchedInputs(watch, clock=clock or FakeClock())
    return prompt


def _texts(messages: list[Message]) -> dict[str, str]:
    return {
        f"{m.meta.get('kind')}:{m.meta.get('source')}": m.text
        for m in messages
        if m.meta.get("kind") != "environment"
    }


def _skill(root: Path, name: str, body: str) -> None:
    path = root / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: The {name} skill\n---\n{body}\n")


async def test_a_verified_build_is_reused_without_a_stat() -> None:
    create_agent("default")
    prompt = _prompt()
    first = await prompt(SESSION, None, "hello")
    second = await prompt(SESSION, None, "hello")
    third = await prompt(SESSION, None, "hello")
    assert prompt.inputs.watch.quiet_answers == 2
    assert _texts(first) == _texts(second) == _texts(third)


async def test_every_kind_of_change_shows_at_the_next_call(tmp_path: Path) -> None:
    create_agent("default")
    prompt = _prompt()
    ws = agent_dir("default")
    await prompt(SESSION, None, "hello")
    await prompt(SESSION, None, "hello")  # from the kept inputs
    soul = ws / "SOUL.md"
    before = soul.stat()
    soul.write_text("Speak like a lighthouse keeper." + " " * 10)
    os.utime(soul, ns=(before.st_atime_ns, before.st_mtime_ns))
    assert "lighthouse keeper" in _texts(await prompt(SESSION, None, "hello"))["bootstrap:SOUL.md"]
    await prompt(SESSION, None, "hello")
    (ws / "USER.md").unlink()
    assert "bootstrap:USER.md" not in _texts(await prompt(SESSION, None, "hello"))
    await prompt(SESSION, None, "hello")
    _skill(ws / "skills", "tide", "Read the TIDE TABLE first.")  # creates skills/ too
    skills = _texts(await prompt(SESSION, None, "tide"))
    assert any("tide" in text for key, text in skills.items() if key.startswith("skills"))
    await prompt(SESSION, None, "tide")
    (ws / "skills" / "tide" / "SKILL.md").write_text(
        "---\nname: tide\ndescription: The harbour skill\n---\nBody.\n"
    )
    skills = _texts(await prompt(SESSION, None, "tide"))
    assert any("harbour" in text for key, text in skills.items() if key.startswith("skills"))
    await prompt(SESSION, None, "tide")
    home = Path(os.environ["BEAMCLAW_HOME"])
    _skill(home / "skills", "comet", "Look up.")  # the global skills directory, new
    skills = _texts(await prompt(SESSION, None, "comet"))
    assert any("comet" in text for key, text in skills.items() if key.startswith("skills"))
    assert prompt.inputs.watch.quiet_answers == 5


async def test_the_database_beside_the_skills_directory_wakes_no_watch() -> None:
    create_agent("default")
    home = Path(os.environ["BEAMCLAW_HOME"])
    _skill(home / "skills", "comet", "Look up.")
    wal = home / "beamclaw.db-wal"
    wal.write_bytes(b"")
    notifier = CountingNotifier()
    prompt = _prompt(ChangeWatch(notifier=lambda: notifier))
    await prompt(SESSION, None, "hello")
    for turn in range(3):  # every turn commits: the WAL is written
        wal.write_bytes(b"frame" * (turn + 1))
        await prompt(SESSION, None, "hello")
    assert prompt.inputs.watch.quiet_answers == 3 and notifier.events == 0


async def test_a_linked_file_is_never_kept_and_retried_later() -> None:
    create_agent("default")
    clock = FakeClock()
    prompt = _prompt(clock=clock)
    ws = agent_dir("default")
    (ws / "notes").mkdir()
    real = ws / "notes" / "user.md"
    real.write_text("Name: Ann\n")
    (ws / "USER.md").unlink()
    (ws / "USER.md").symlink_to(real)
    await prompt(SESSION, None, "hello")
    await prompt(SESSION, None, "hello")
    assert prompt.inputs.watch.quiet_answers == 0
    real.write_text("Name: Bea\n")  # not in a watched directory
    assert "Bea" in _texts(await prompt(SESSION, None, "hello"))["bootstrap:USER.md"]
    (ws / "USER.md").unlink()
    (ws / "USER.md").write_text("Name: Cy\n")
    await prompt(SESSION, None, "hello")
    assert prompt.inputs.watch.quiet_answers == 0  # not tried again within the window
    clock.now += 11
    await prompt(SESSION, None, "hello")
    await prompt(SESSION, None, "hello")
    assert prompt.inputs.watch.quiet_answers == 1


@pytest.mark.parametrize(
    "watch",
    [
        pytest.param(lambda: ChangeWatch(notifier=lambda: None), id="no-inotify"),
        pytest.param(lambda: ChangeWatch(filesystem=lambda _path: "cifs"), id="network-fs"),
    ],
)
async def test_without_a_usable_watch_every_build_stats(watch: object) -> None:
    assert callable(watch)
    change_watch = watch()
    assert isinstance(change_watch, ChangeWatch)
    create_agent("default")
    prompt = _prompt(change_watch)
    await prompt(SESSION, None, "hello")
    await prompt(SESSION, None, "hello")
    assert change_watch.quiet_answers == 0
    (agent_dir("default") / "MEMORY.md").write_text("- likes green tea\n")
    assert "green tea" in _texts(await prompt(SESSION, None, "hello"))["memory:MEMORY.md"]


async def test_another_home_is_another_workspace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    create_agent("default")
    (agent_dir("default") / "MEMORY.md").write_text("- first home\n")
    prompt = _prompt()
    await prompt(SESSION, None, "hello")
    await prompt(SESSION, None, "hello")
    monkeypatch.setenv("BEAMCLAW_HOME", str(tmp_path / "other"))
    create_agent("default")
    (agent_dir("default") / "MEMORY.md").write_text("- second home\n")
    assert "second home" in _texts(await prompt(SESSION, None, "hello"))["memory:MEMORY.md"]


def test_kept_inputs_refuse_a_path_they_did_not_read() -> None:
    inputs = Inputs({"/ws/MEMORY.md": "x"}, None)
    assert inputs.read("/ws/MEMORY.md") == "x"
    with pytest.raises(OutsideInputsError):
        inputs.read("/ws/memory/2031-01-02.md")


class _ChangesAfterReading(FileTextCache):
    """Edits SOUL.md right after the first build read it: before the watch is armed."""

    def __init__(self) -> None:
        super().__init__(clock=an_hour_from_now_ns)
        self.edited = False

    def _after(self, path: str | Path) -> None:
        if str(path).endswith("SOUL.md") and not self.edited:
            self.edited = True
            Path(path).write_text("Changed between the build and the watch.\n")

    def cached(self, path: str | Path) -> str | None:
        text = super().cached(path)
        self._after(path)
        return text

    def read(self, path: str | Path) -> str | None:
        text = super().read(path)
        self._after(path)
        return text


async def test_a_change_before_the_watch_is_armed_is_caught_by_the_check() -> None:
    create_agent("default")
    prompt = _prompt()
    prompt.files = _ChangesAfterReading()
    first = _texts(await prompt(SESSION, None, "hello"))
    assert "Changed between" not in first["bootstrap:SOUL.md"]
    second = _texts(await prompt(SESSION, None, "hello"))
    assert "Changed between" in second["bootstrap:SOUL.md"]
