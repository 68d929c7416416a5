"""The TUI under Textual's test pilot, embedded: the real system against a fake LLM server.

Covers what a terminal test cannot pin down cheaply: the queue position of a message sent
while a turn runs, the ``/status`` command answered by the core, approval answered with
``n`` (denied: the tool does not run), history recall and Ctrl-D on an empty input.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from textual.pilot import Pilot

from beamclaw_cli.tui.app import BeamclawTui, ChatInput
from beamclaw_cli.tui.backend import history_path
from beamclaw_cli.tui.chat import open_embedded
from beamclaw_cli.tui.history import InputHistory
from beamclaw_cli.tui.transcript import StatusLine
from beamclaw_core.testing import FakeOpenAIServer, FakeReply
from beamclaw_gateway import load_config

from .tui_support import write_config, write_note_reply


async def _until(pilot: Pilot[None], check: Callable[[], bool]) -> None:
    """Let the app run until ``check()`` holds (the test's own timeout bounds it)."""
    while not check():
        await pilot.pause(0.02)


def _texts(app: BeamclawTui, kind: str) -> list[str]:
    return [e.text for e in app.transcript.entries if e.kind == kind]


async def test_pilot_queue_status_denied_approval_history_and_ctrl_d(beamclaw_home: Path) -> None:
    hold = asyncio.Event()
    script = [
        FakeReply(text="First answer, held open until the test lets it finish.", hold=hold),
        FakeReply(text="Second answer."),
        write_note_reply(),
        FakeReply(text="Understood, no file."),
    ]
    async with FakeOpenAIServer(script) as server:
        write_config(beamclaw_home, server.base_url)
        cfg = load_config(None).settings
        backend = await open_embedded(
            cfg, agent="default", user_id="local:pilot", home=beamclaw_home
        )
        try:
            history = InputHistory(history_path(beamclaw_home))
            status = StatusLine(agent="default", model="fake-model", backend=backend.description)
            app = BeamclawTui(backend, history, status)
            async with app.run_test(size=(100, 30)) as pilot:
                box = app.query_one(ChatInput)
                await pilot.press(*"first", "enter")
                await _until(pilot, lambda: app.transcript.busy)
                await pilot.press(*"second", "enter")
                await _until(pilot, lambda: app.transcript.status.queued == 1)
                assert "queued #1" in app.transcript.status.render()
                assert any("position 1" in t for t in _texts(app, "notice"))
                hold.set()
                await _until(pilot, lambda: "Second answer." in _texts(app, "assistant"))
                await _until(pilot, lambda: not app.transcript.busy)
                assert app.transcript.status.tokens == 36
                assert app.transcript.status.activity == "idle"

                await pilot.press(*"/status", "enter")
                await _until(
                    pilot, lambda: any("Autonomy: supervised" in t for t in _texts(app, "notice"))
                )

                await pilot.press(*"write it", "enter")
                await _until(pilot, lambda: app.transcript.pending_approval is not None)
                assert box.approval_pending
                await pilot.press("n")
                await _until(pilot, lambda: "Understood, no file." in _texts(app, "assistant"))
                approvals = [e for e in app.transcript.entries if e.kind == "approval"]
                assert [a.status for a in approvals] == ["no"]
                assert not (beamclaw_home / "agents" / "default" / "note.txt").exists()
                assert box.text == ""  # the "n" answered the approval, it was not typed

                await pilot.press("up")
                assert box.text == "write it"
                await pilot.press("up")
                assert box.text == "/status"
                await pilot.press("down", "down")
                assert box.text == ""
                await pilot.press("ctrl+d")
                await pilot.pause()
            assert app.return_code == 0
        finally:
            await backend.close()
    saved = (beamclaw_home / "tui_history").read_text().splitlines()
    assert saved == ['"first"', '"second"', '"/status"', '"write it"']


async def test_pilot_draws_each_token_as_it_arrives(beamclaw_home: Path) -> None:
    """Lockstep: the fake sends token ``k`` only once the TUI shows every token before
    ``k - 1`` (one token of slack: the rest of a word that could still begin a secret
    waits for the next token). A TUI, or a core, that buffered text would stall it."""
    # (no "token", "key" or "password": a word after one may be its value and waits too)
    words = ("Hi! Each word shows up on screen the moment the core streams it, " * 2).split()
    tokens = (words[0], *(" " + w for w in words[1:]))
    shown: list[BeamclawTui] = []

    def drawn() -> str:
        return "".join(_texts(shown[0], "assistant")) if shown else ""

    async def gate(event: int) -> None:  # event k + 1 is token k
        want = "".join(tokens[: max(0, event - 2)])
        async with asyncio.timeout(5):
            while not drawn().startswith(want):
                await asyncio.sleep(0.005)

    async with FakeOpenAIServer([FakeReply(tokens=tokens, gate=gate)]) as server:
        write_config(beamclaw_home, server.base_url)
        cfg = load_config(None).settings
        backend = await open_embedded(
            cfg, agent="default", user_id="local:pilot", home=beamclaw_home
        )
        try:
            status = StatusLine(agent="default", model="fake-model", backend=backend.description)
            app = BeamclawTui(backend, InputHistory(history_path(beamclaw_home)), status)
            shown.append(app)
            async with app.run_test(size=(100, 30)) as pilot:
                await pilot.press(*"go", "enter")
                await _until(pilot, lambda: drawn() == "".join(tokens) and not app.transcript.busy)
        finally:
            await backend.close()
