"""The TUI in a real terminal (tmux), embedded and against a running daemon.

A fake OpenAI-compatible server (real HTTP on 127.0.0.1) plays the model. Streaming is
proven by holding the fake stream open before its last frames: the partial answer must be
on screen while the LLM call is still running. The approval is answered with a key in
the TUI and the file the tool wrote is checked on disk.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import httpx
import pytest

from beamclaw_core.testing import FakeReply

from .conftest import BEAMCLAW, free_port
from .tui_support import BEAMCLAW_MODEL, ThreadedFakeLLM, Tmux, write_config, write_note_reply

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

# Streamed delta by delta, so the first part shows while the stream is held open.
STREAMED = "Streaming works: part one arrives before the end. " + "Lorem ipsum dolor sit amet. " * 6


def _env(home: Path, port: int) -> dict[str, str]:
    return {
        "BEAMCLAW_HOME": str(home),
        "BEAMCLAW_PORT": str(port),
        "BEAMCLAW_USER": "tester",
        "PATH": os.environ.get("PATH", ""),
        "HOME": str(home.parent),
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
    }


@pytest.fixture
def tmux_sessions() -> Iterator[list[Tmux]]:
    sessions: list[Tmux] = []
    yield sessions
    for t in sessions:
        t.close()


def _status_line(screen: str) -> str:
    lines = [line for line in screen.splitlines() if "agent default" in line]
    return lines[-1] if lines else ""


def _chat_session(
    tui: Tmux, fake: ThreadedFakeLLM, hold: asyncio.Event, home: Path, backend: str
) -> None:
    """Stream, approve a write_file in the TUI, then check the result on screen and disk."""
    tui.wait_for(lambda s: "agent default" in s and f"model {BEAMCLAW_MODEL}" in s)
    assert backend in _status_line(tui.screen())

    tui.type("hello there")
    tui.send("Enter")
    tui.wait_for("› hello there")
    # The fake holds its stream open before the last text piece: text already on screen
    # while the LLM call is still running is text that was streamed.
    screen = tui.wait_for("part one arrives", timeout=30)
    assert "And this is the end." not in screen
    assert "thinking" in _status_line(screen)
    fake.release(hold)
    tui.wait_for("And this is the end.")
    tui.wait_for(lambda s: "idle" in _status_line(s) and "tokens 18" in _status_line(s))

    tui.type("please write a note")
    tui.send("Enter")
    # one capture may land between two writes of a redraw: wait for the whole of it
    screen = tui.wait_for(
        lambda s: (
            "? approve write_file" in s
            and '"path": "note.txt"' in s
            and "approve write_file?" in _status_line(s)
        )
    )
    tui.type("y")
    tui.wait_for("approval write_file: yes")
    tui.wait_for("created note.txt")
    tui.wait_for("The note is written.")
    tui.wait_for(lambda s: "idle" in _status_line(s))
    assert (home / "agents" / "default" / "note.txt").read_text() == "hi there"


def _script(fake: ThreadedFakeLLM) -> asyncio.Event:
    """Three replies: a held-open stream, a write_file call, the final answer."""
    hold = fake.new_hold()
    answer = FakeReply(text=STREAMED + "And this is the end.", chunk_size=8)
    last = len(answer.text_pieces())  # event 0 is the role chunk: the last text piece

    async def gate(event: int) -> None:
        if event == last:
            await hold.wait()

    fake.add(
        replace(answer, gate=gate),
        write_note_reply(),
        FakeReply(text="The note is written."),
    )
    return hold


def test_tui_embedded_streams_approves_and_exits_on_ctrl_d(
    beamclaw_home: Path, tmux_sessions: list[Tmux]
) -> None:
    port = free_port()  # nothing listens there: the TUI runs the system in-process
    with ThreadedFakeLLM([]) as fake:
        hold = _script(fake)
        write_config(beamclaw_home, fake.base_url)
        tui = Tmux([BEAMCLAW, "tui"], _env(beamclaw_home, port), beamclaw_home.parent)
        tmux_sessions.append(tui)
        tui.wait_for("embedded")
        _chat_session(tui, fake, hold, beamclaw_home, "embedded")

        # history recall: Up brings back the last input, multi-line input with Ctrl-J
        tui.send("Up")
        tui.wait_for("│ please write a note")
        tui.send("C-u")
        tui.wait_for(lambda s: "please write a note" not in s.split("╭")[-1])
        tui.type("first line")
        tui.send("C-j")
        tui.type("second line")
        tui.wait_for(lambda s: "│ first line" in s and "│ second line" in s)
        tui.send("C-a", "C-k", "Up", "C-a", "C-k", "C-k")  # empty the input again
        tui.send("C-d")
        screen = tui.wait_for("TUI-EXIT-CODE=")
    assert "TUI-EXIT-CODE=0" in screen
    # the terminal is restored: the TUI's screen (status line, input box) is gone
    assert "agent default" not in screen
    history = (beamclaw_home / "tui_history").read_text().splitlines()
    assert history[-2:] == ['"hello there"', '"please write a note"']


def _wait_ready(port: int, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            out, err = proc.communicate()
            raise AssertionError(f"serve exited early: {out}\n{err}")
        try:
            if httpx.get(f"http://127.0.0.1:{port}/ready", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise AssertionError("the daemon did not become ready")


def test_tui_against_running_daemon_over_ws_with_token(
    beamclaw_home: Path, tmux_sessions: list[Tmux]
) -> None:
    port = free_port()
    token = "tui-test-token-0123456789"
    env = {**_env(beamclaw_home, port), "TUI_TEST_GATEWAY_TOKEN": token}
    with ThreadedFakeLLM([]) as fake:
        hold = _script(fake)
        write_config(beamclaw_home, fake.base_url, token_env="TUI_TEST_GATEWAY_TOKEN")
        daemon = subprocess.Popen(
            [BEAMCLAW, "serve"],
            env={**os.environ, **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            _wait_ready(port, daemon)
            tui = Tmux([BEAMCLAW, "tui"], env, beamclaw_home.parent)
            tmux_sessions.append(tui)
            tui.wait_for(f"daemon 127.0.0.1:{port}")
            _chat_session(tui, fake, hold, beamclaw_home, f"daemon 127.0.0.1:{port}")
            screen = tui.screen()
            session_id = re.search(r"session-[0-9a-f]{8}", _status_line(screen))
            assert session_id is not None
            tui.send("C-c")
            screen = tui.wait_for("TUI-EXIT-CODE=")
            assert "TUI-EXIT-CODE=0" in screen
            # the daemon ran the turns: its database has the conversation
            listed = subprocess.run(
                [BEAMCLAW, "sessions", "list", "--json"],
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                check=True,
            )
            assert session_id.group(0) in listed.stdout
            # a wrong token: one error line before the screen is taken over, exit 1
            wrong = Tmux(
                [BEAMCLAW, "tui"],
                {**env, "TUI_TEST_GATEWAY_TOKEN": "wrong-token-0123456789"},
                beamclaw_home.parent,
            )
            tmux_sessions.append(wrong)
            screen = wrong.wait_for("TUI-EXIT-CODE=")
            assert "TUI-EXIT-CODE=1" in screen
            assert "error: the daemon refused the WebSocket" in screen and "HTTP 401" in screen
            assert "Traceback" not in screen
            # deleting while the daemon runs goes through its REST API
            deleted = subprocess.run(
                [BEAMCLAW, "sessions", "delete", session_id.group(0), "--yes"],
                env={**os.environ, **env},
                capture_output=True,
                text=True,
                check=False,
            )
            assert deleted.returncode == 0, deleted.stderr
            api = httpx.get(
                f"http://127.0.0.1:{port}/api/sessions",
                headers={"Authorization": f"Bearer {token}"},
                timeout=10,
            ).json()
            assert api["sessions"] == []
        finally:
            daemon.terminate()
            daemon.communicate(timeout=30)
