"""Test seams for the TUI: a fake LLM on its own thread, a config, and a tmux driver.

``ThreadedFakeLLM`` runs :class:`FakeOpenAIServer` on a private event loop in a thread,
so a ``beamclaw`` subprocess (TUI in tmux, ``serve``) can call it over real HTTP while the
test drives the terminal. ``Tmux`` uses its own server socket per test (``-L``), polls
``capture-pane`` until a deadline instead of sleeping, and kills its server at the end.
"""

from __future__ import annotations

import asyncio
import shlex
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from beamclaw_core.testing import FakeOpenAIServer, FakeReply, FakeToolCall

BEAMCLAW_MODEL = "fake-model"


def config_text(
    base_url: str, *, token_env: str | None = None, autonomy: str = "supervised"
) -> str:
    lines = [
        "[core]",
        'default_provider = "fake"',
        f'autonomy_level = "{autonomy}"',
        "[core.providers.fake]",
        'kind = "openai"',
        f'base_url = "{base_url}"',
        f'model = "{BEAMCLAW_MODEL}"',
    ]
    if token_env is not None:
        lines += ["[gateway.http]", f'token = {{ env = "{token_env}" }}']
    return "\n".join(lines) + "\n"


def write_config(home: Path, base_url: str, *, token_env: str | None = None) -> Path:
    """``$BEAMCLAW_HOME/beamclaw.toml`` pointing the default provider at ``base_url``."""
    home.mkdir(parents=True, exist_ok=True)
    path = home / "beamclaw.toml"
    path.write_text(config_text(base_url, token_env=token_env))
    return path


def write_note_reply() -> FakeReply:
    return FakeReply(
        tool_calls=(FakeToolCall("write_file", {"path": "note.txt", "content": "hi there"}),)
    )


class ThreadedFakeLLM:
    """A :class:`FakeOpenAIServer` served from a background thread's event loop."""

    def __init__(self, script: Sequence[Any]) -> None:
        self._script = list(script)
        self._loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._loop.run_forever, daemon=True)
        self.server: FakeOpenAIServer | None = None
        self._holds: list[asyncio.Event] = []

    def new_hold(self) -> asyncio.Event:
        """An event belonging to the server's loop (for ``FakeReply(hold=...)``)."""

        async def make() -> asyncio.Event:
            return asyncio.Event()

        event = self._call(make())
        self._holds.append(event)
        return event

    def release(self, hold: asyncio.Event) -> None:
        self._loop.call_soon_threadsafe(hold.set)

    def add(self, *steps: Any) -> None:
        assert self.server is not None
        self._loop.call_soon_threadsafe(self.server.add, *steps)

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self._loop).result(10)

    @property
    def base_url(self) -> str:
        assert self.server is not None
        return self.server.base_url

    def __enter__(self) -> ThreadedFakeLLM:
        self._thread.start()
        self.server = FakeOpenAIServer(self._script)
        self._call(self.server.start())
        return self

    def __exit__(self, *exc: object) -> None:
        for hold in self._holds:
            self.release(hold)
        if self.server is not None:
            self._call(self.server.stop())
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._loop.close()


class Tmux:
    """One tmux server (own socket) running one command in a fixed-size window."""

    def __init__(
        self, command: Sequence[str], env: dict[str, str], cwd: Path, size: str = "110x32"
    ):
        self.socket = f"bctest-{uuid.uuid4().hex[:10]}"
        self.session = "tui"
        width, height = size.split("x")
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in sorted(env.items()))
        shell = (
            f"cd {shlex.quote(str(cwd))} && env -i {exports} {shlex.join(command)}; "
            'echo "TUI-EXIT-CODE=$?"; sleep 600'
        )
        self._tmux(
            "new-session", "-d", "-s", self.session, "-x", width, "-y", height, "sh", "-c", shell
        )

    def _tmux(self, *args: str) -> str:
        out = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        )
        return out.stdout

    def send(self, *keys: str) -> None:
        """``send-keys`` names (``Enter``, ``C-d``) or literal text with ``-l``."""
        self._tmux("send-keys", "-t", self.session, *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", self.session, "-l", text)

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.session)

    def wait_for(self, predicate: str | Callable[[str], bool], timeout: float = 30.0) -> str:
        """Poll the screen until it contains the text (or the predicate holds)."""

        def contains(screen: str) -> bool:
            return isinstance(predicate, str) and predicate in screen

        check: Callable[[str], bool] = contains if isinstance(predicate, str) else predicate
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.05)
        raise AssertionError(f"timed out waiting for {predicate!r}; screen:\n{screen}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, check=False)
