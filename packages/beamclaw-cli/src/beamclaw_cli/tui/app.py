"""The Textual application: transcript, approval bar, input, status line.

Keys: Enter sends; Ctrl-J or Alt-Enter inserts a newline; Up/Down on the first/last line
recall input history; y/n/a answer a pending approval while the input is empty; Escape
sends ``/stop``; Ctrl-C, Ctrl-D on an empty input, or ``/quit`` exit (the terminal is
restored by Textual). Every other ``/command`` goes to the agent system, which handles
``/new /reset /stop /status /context /yes /no /always``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from rich.console import RenderableType
from rich.markdown import Markdown
from rich.text import Text
from textual import events, work
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static, TextArea

from beamclaw_cli.tui.backend import Decision
from beamclaw_cli.tui.chat import TuiChat
from beamclaw_cli.tui.history import InputHistory
from beamclaw_cli.tui.transcript import Entry, StatusLine, Transcript

LOCAL_HELP = """\
Enter sends · Ctrl-J / Alt-Enter newline · Up/Down history · Esc stops the turn
y / n / a (empty input) answer an approval · Ctrl-C or Ctrl-D (empty input) quits
Agent commands: /new /reset /stop /status /context /yes /no /always
TUI commands: /help /quit"""

_DECISION_KEYS: dict[str, Decision] = {"y": "yes", "n": "no", "a": "always"}
_NEWLINE_KEYS = frozenset({"ctrl+j", "alt+enter", "shift+enter", "ctrl+enter"})
_TOOL_MARK = {"running": ("…", "yellow"), "ok": ("✓", "green"), "error": ("✗", "red")}


def render_entry(entry: Entry) -> RenderableType:
    """The renderable for one transcript entry (plain text stays plain: no markup)."""
    if entry.kind == "user":
        return Text.assemble(("› ", "bold cyan"), (entry.text, "bold"))
    if entry.kind == "assistant":
        return Markdown(entry.text or "…")
    if entry.kind == "tool":
        mark, style = _TOOL_MARK.get(entry.status, ("•", "yellow"))
        text = Text.assemble((f"{mark} ", style), (entry.title, "bold"), " ", (entry.text, "dim"))
        if entry.detail:
            text.append(f"\n  {entry.detail}", style="dim")
        return text
    if entry.kind == "approval":
        if entry.status == "pending":
            return Text.assemble(
                ("? approve ", "bold magenta"),
                (entry.title, "bold"),
                " ",
                (entry.text, "dim"),
                ("  — [y]es [n]o [a]lways", "magenta"),
            )
        return Text.assemble(
            ("approval ", "magenta"), (entry.title, "bold"), f": {entry.status}", style="dim"
        )
    if entry.kind == "error":
        return Text(entry.text, style="bold red")
    return Text(entry.text, style="dim italic")


class ChatInput(TextArea):
    """A multi-line input: Enter submits, Ctrl-J/Alt-Enter breaks the line."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+d", "eof", "Quit on empty input", show=False),
    ]

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class ApprovalKey(Message):
        def __init__(self, decision: Decision) -> None:
            super().__init__()
            self.decision: Decision = decision

    def __init__(self, history: InputHistory, **kwargs: Any) -> None:
        super().__init__(soft_wrap=True, show_line_numbers=False, tab_behavior="focus", **kwargs)
        self.input_history = history
        self.approval_pending = False

    async def _on_key(self, event: events.Key) -> None:
        if event.key in _NEWLINE_KEYS:
            event.stop()
            event.prevent_default()
            self.action_newline()
            return
        if event.key == "enter":
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted(self.text))
            return
        if self.approval_pending and not self.text and event.character in _DECISION_KEYS:
            event.stop()
            event.prevent_default()
            self.post_message(self.ApprovalKey(_DECISION_KEYS[event.character or ""]))
            return
        await super()._on_key(event)

    def action_newline(self) -> None:
        start, end = self.selection
        self._replace_via_keyboard("\n", start, end)  # pyright: ignore[reportPrivateUsage]

    def action_eof(self) -> None:
        if self.text:
            self.action_delete_right()
        else:
            self.app.exit()

    def action_cursor_up(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == 0:
            recalled = self.input_history.previous(self.text)
            if recalled is not None:
                self._set(recalled)
            return
        super().action_cursor_up(select)

    def action_cursor_down(self, select: bool = False) -> None:
        if not select and self.cursor_location[0] == self.document.line_count - 1:
            recalled = self.input_history.next()
            if recalled is not None:
                self._set(recalled)
            return
        super().action_cursor_down(select)

    def _set(self, text: str) -> None:
        self.load_text(text)
        self.move_cursor(self.document.end)


class BeamclawTui(App[None]):
    """Chat with one agent through a :class:`TuiChat`."""

    TITLE = "BeamClaw"
    CSS = """
    Screen { layout: vertical; }
    #log { height: 1fr; padding: 0 1; }
    #log > Static { margin: 0 0 1 0; }
    ChatInput { height: auto; min-height: 3; max-height: 12; border: round $accent; }
    #status { height: 1; background: $boost; color: $text-muted; padding: 0 1; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+c", "quit", "Quit", show=False, priority=True),
        Binding("escape", "stop_turn", "Stop the turn", show=False),
    ]

    def __init__(
        self, backend: TuiChat, history: InputHistory, status: StatusLine, banner: str = ""
    ) -> None:
        super().__init__()
        self.backend = backend
        self.input_history = history
        self.transcript = Transcript(status=status)
        self.banner = banner
        self._widgets: list[Static] = []

    def compose(self) -> ComposeResult:
        yield VerticalScroll(id="log")
        yield ChatInput(self.input_history, id="input")
        yield Static(Text(self.transcript.status.render()), id="status")

    def on_mount(self) -> None:
        self.query_one(ChatInput).focus()
        if self.banner:
            self._show([self.transcript.add_notice(self.banner)])
        self._pump()

    @work(exclusive=True, group="events")
    async def _pump(self) -> None:
        async for event in self.backend.events():
            self._show(self.transcript.apply(event))
        self._show([self.transcript.add_notice("backend closed", error=True)])

    # ------------------------------------------------------------------ drawing

    def _show(self, changed: list[int]) -> None:
        log = self.query_one("#log", VerticalScroll)
        follow = log.scroll_y >= log.max_scroll_y - 1
        for index in sorted(set(changed)):
            renderable = render_entry(self.transcript.entries[index])
            if index < len(self._widgets):
                self._widgets[index].update(renderable)
            else:
                while len(self._widgets) < index:  # entries added without a redraw
                    missing = render_entry(self.transcript.entries[len(self._widgets)])
                    self._mount_entry(log, missing)
                self._mount_entry(log, renderable)
        self.query_one("#status", Static).update(Text(self.transcript.status.render()))
        self.query_one(ChatInput).approval_pending = self.transcript.pending_approval is not None
        if follow:
            log.scroll_end(animate=False)

    def _mount_entry(self, log: VerticalScroll, renderable: RenderableType) -> None:
        widget = Static(renderable)
        self._widgets.append(widget)
        log.mount(widget)

    # ------------------------------------------------------------------ input

    async def on_chat_input_submitted(self, message: ChatInput.Submitted) -> None:
        text = message.text.strip("\n")
        if not text.strip():
            return
        box = self.query_one(ChatInput)
        box.clear()
        self.input_history.add(text)
        command = text.strip().split(maxsplit=1)[0].lower() if text.startswith("/") else ""
        if command in ("/quit", "/exit", "/q"):
            self.exit()
            return
        if command == "/help":
            self._show([self.transcript.add_notice(LOCAL_HELP)])
            return
        self._show([self.transcript.add_user(text)])
        await self.backend.send(text)

    async def on_chat_input_approval_key(self, message: ChatInput.ApprovalKey) -> None:
        pending = self.transcript.pending_approval
        if pending is None or pending.key is None:
            return
        await self.backend.answer_approval(pending.key, message.decision)

    async def action_stop_turn(self) -> None:
        if self.transcript.busy:
            await self.backend.send("/stop")
