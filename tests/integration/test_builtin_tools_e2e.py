"""Every built-in tool family in a scripted-provider turn through the real loop and core.

The provider is scripted, everything else is real: the session lane, the executor, the
approval policy, the tool registry with the built-in tools, the SQLite store, the
scrubber, real subprocesses and real HTTP servers on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from beamclaw_core.loop import (
    ApprovalRequested,
    ApprovalResolved,
    Cancelled,
    ToolStarted,
    TurnDone,
)
from beamclaw_core.messages import Message, Role
from beamclaw_core.testing import CallTool, CallTools, Reply
from beamclaw_core.workspace import create_agent
from beamclaw_tools import Autonomy, ToolsSettings

from .conftest import ADDRESS, Harness, tool_messages

Make = Callable[..., Any]


def _by_name(history: list[Message]) -> dict[str, Message]:
    return {m.name or "": m for m in tool_messages(history)}


async def test_read_only_tools_run_without_approval(make_harness: Make) -> None:
    h: Harness = await make_harness(
        [
            CallTools(
                (
                    CallTool("list_dir", {"path": ".", "depth": 2}),
                    CallTool("read_file", {"path": "notes/todo.md"}),
                    CallTool("keyword_search", {"pattern": "buy milk"}),
                    CallTool("jq", {"filter": ".items | length", "path": "data.json"}),
                    CallTool("think", {"thought": "three items, one todo"}),
                )
            ),
            Reply("You have one todo and three items."),
        ]
    )
    (h.workspace / "notes").mkdir()
    (h.workspace / "notes" / "todo.md").write_text("- buy milk\n", encoding="utf-8")
    (h.workspace / "data.json").write_text(json.dumps({"items": [1, 2, 3]}), encoding="utf-8")
    events, history = await h.turn("What is on my list?")
    assert not any(isinstance(e, ApprovalRequested) for e in events)
    assert isinstance(events[-1], TurnDone)
    assert events[-1].text == "You have one todo and three items."
    results = _by_name(history)
    assert not any(m.is_error for m in results.values()), results
    assert "todo.md" in results["list_dir"].text
    assert "buy milk" in results["read_file"].text
    assert "notes/todo.md" in results["keyword_search"].text
    assert results["jq"].text.strip() == "3"
    assert results["think"].text
    # the model's second request carried all five results, in the order it asked
    second = h.provider.calls[1].messages
    assert [m.name for m in second if m.role is Role.TOOL] == [
        "list_dir",
        "read_file",
        "keyword_search",
        "jq",
        "think",
    ]


PATCH = """--- a/poem.txt
+++ b/poem.txt
@@ -1,2 +1,2 @@
 roses are red
-violets are blue
+violets are violet
"""


async def test_file_changing_tools_run_when_approved(make_harness: Make) -> None:
    h: Harness = await make_harness(
        [
            CallTool(
                "write_file", {"path": "poem.txt", "content": "roses are red\nviolets are blue\n"}
            ),
            CallTool("edit_file", {"path": "poem.txt", "old_text": "roses", "new_text": "Roses"}),
            CallTool("apply_patch", {"patch": PATCH.replace("roses", "Roses")}),
            CallTool("write_file", {"path": "scratch.txt", "content": "tmp"}),
            CallTool("delete_file", {"path": "scratch.txt"}),
            Reply("Done editing."),
        ],
        decisions=dict.fromkeys(("write_file", "edit_file", "apply_patch", "delete_file"), "yes"),
    )
    events, history = await h.turn("Write and fix my poem")
    asked = [e.tool for e in events if isinstance(e, ApprovalRequested)]
    assert asked == ["write_file", "edit_file", "apply_patch", "write_file", "delete_file"]
    assert [e.decision for e in events if isinstance(e, ApprovalResolved)] == ["yes"] * 5
    assert not any(m.is_error for m in tool_messages(history)), tool_messages(history)
    assert (h.workspace / "poem.txt").read_text(encoding="utf-8") == (
        "Roses are red\nviolets are violet\n"
    )
    assert not (h.workspace / "scratch.txt").exists()
    assert isinstance(events[-1], TurnDone)


async def test_a_denied_write_is_answered_and_the_turn_continues(make_harness: Make) -> None:
    h: Harness = await make_harness(
        [
            CallTool("write_file", {"path": "secret-plan.txt", "content": "x"}),
            Reply("Understood, I did not write it."),
        ],
        decisions={"write_file": "no"},
    )
    events, history = await h.turn("Write the plan")
    (result,) = tool_messages(history)
    assert result.is_error
    assert result.text.startswith("Denied")
    assert not (h.workspace / "secret-plan.txt").exists()
    assert isinstance(events[-1], TurnDone)
    assert events[-1].text == "Understood, I did not write it."
    # the denial reached the model right after its call
    assert h.provider.calls[1].messages[-1].tool_call_id == result.tool_call_id


def _gone(pid: int) -> bool:
    """No such process any more (a zombie waiting for its reaper counts as gone)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    status = Path(f"/proc/{pid}/status")
    try:
        return "\nState:\tZ" in status.read_text()
    except FileNotFoundError:
        return True


async def _wait_gone(pid: int) -> None:
    async with asyncio.timeout(10):
        while not _gone(pid):
            await asyncio.sleep(0.02)


async def test_bash_timeout_kills_the_group_and_the_turn_goes_on(make_harness: Make) -> None:
    script = "sleep 300 & echo $! > child.pid; sleep 300"
    h: Harness = await make_harness(
        [
            CallTool("bash", {"command": script, "timeout_seconds": 1}),
            Reply("The command timed out, moving on."),
        ],
        autonomy=Autonomy.FULL,
    )
    events, history = await h.turn("Run the long thing")
    (result,) = tool_messages(history)
    assert result.is_error
    assert "timed out" in result.text.lower() or "timeout" in result.text.lower()
    assert isinstance(events[-1], TurnDone)
    assert events[-1].text == "The command timed out, moving on."
    child = int((h.workspace / "child.pid").read_text().strip())
    await _wait_gone(child)


async def test_cancelling_mid_bash_answers_with_a_synthetic_result(make_harness: Make) -> None:
    script = "echo $$ > shell.pid; sleep 300"
    h: Harness = await make_harness(
        [CallTool("bash", {"command": script}), Reply("never reached")],
        autonomy=Autonomy.FULL,
    )
    handle = await h.core.send(ADDRESS, "Run it")
    pid_file = h.workspace / "shell.pid"
    events: list[Any] = []

    async def consume() -> None:
        async for event in handle.events():
            events.append(event)

    reader = asyncio.create_task(consume())
    async with asyncio.timeout(10):
        while not (pid_file.exists() and pid_file.read_text().strip()):
            await asyncio.sleep(0.02)
    pid = int(pid_file.read_text().strip())
    await h.core.cancel(handle.session_id)
    await reader
    assert any(isinstance(e, ToolStarted) and e.tool == "bash" for e in events)
    assert isinstance(events[-1], Cancelled)
    history = await h.core.history(handle.session_id)
    (result,) = tool_messages(history)
    assert result.is_error
    assert "Cancelled" in result.text
    assert len(h.provider.calls) == 1
    await _wait_gone(pid)
    with pytest.raises(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)


@pytest.fixture
async def site() -> AsyncIterator[tuple[str, int, list[str]]]:
    """A page, a JSON endpoint and a redirect to a refused address, on 127.0.0.1."""
    hits: list[str] = []

    async def page(request: web.Request) -> web.Response:
        hits.append(request.path)
        html = (
            "<html><head><script>evil()</script></head><body><nav>menu</nav>"
            "<main><h1>Opening hours</h1><p>Mon-Fri 9 to 5.</p></main></body></html>"
        )
        return web.Response(text=html, content_type="text/html")

    async def api(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.json_response({"status": "green"})

    async def redirect(request: web.Request) -> web.Response:
        hits.append(request.path)
        raise web.HTTPFound("http://169.254.169.254/latest/meta-data/")

    app = web.Application()
    app.router.add_get("/page", page)
    app.router.add_get("/api", api)
    app.router.add_get("/redirect", redirect)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    tcp = web.TCPSite(runner, "127.0.0.1", 0)
    await tcp.start()
    port = runner.addresses[0][1]
    try:
        yield f"http://127.0.0.1:{port}", port, hits
    finally:
        await runner.cleanup()


async def test_network_tools_reach_an_allowed_server_and_refuse_a_bad_redirect(
    make_harness: Make, site: tuple[str, int, list[str]]
) -> None:
    base, port, hits = site
    settings = ToolsSettings()
    settings.http_request.allowed_hosts = [f"127.0.0.1:{port}"]
    settings.web_fetch.allowed_hosts = [f"127.0.0.1:{port}"]
    h: Harness = await make_harness(
        [
            CallTool("http_request", {"url": f"{base}/api"}),
            CallTool("web_fetch", {"url": f"{base}/page"}),
            CallTool("web_fetch", {"url": f"{base}/redirect"}),
            Reply("Status green, open Mon-Fri; the other link was refused."),
        ],
        autonomy=Autonomy.FULL,
        tools_settings=settings,
    )
    events, history = await h.turn("Check the site")
    api, page, refused = tool_messages(history)
    assert not api.is_error and "200" in api.text and "green" in api.text
    assert not page.is_error and "Opening hours" in page.text and "Mon-Fri 9 to 5." in page.text
    assert "evil()" not in page.text
    assert refused.is_error
    assert "169.254.169.254" in refused.text
    assert hits == ["/api", "/page", "/redirect"]
    assert isinstance(events[-1], TurnDone)


async def test_a_secret_in_a_tool_result_is_stored_redacted(make_harness: Make) -> None:
    secret = "ghp_" + "A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8"
    h: Harness = await make_harness(
        [CallTool("read_file", {"path": "creds.txt"}), Reply("I found a token (hidden).")]
    )
    (h.workspace / "creds.txt").write_text(f"github token: {secret}\n", encoding="utf-8")
    _events, history = await h.turn("What is in creds.txt?")
    (result,) = tool_messages(history)
    assert secret not in result.text
    assert "[REDACTED]" in result.text
    assert all(secret not in m.text for m in h.provider.calls[1].messages)
    stored = await h.core.store.messages(h.session_id)
    assert all(
        secret not in json.dumps(r.message.model_dump(mode="json")) for r in stored if r.message
    )


async def test_malformed_arguments_and_unknown_tools_are_error_results(make_harness: Make) -> None:
    h: Harness = await make_harness(
        [
            CallTools(
                (
                    CallTool("read_file", raw_args='{"path": "x.txt"'),
                    CallTool("no_such_tool", {"a": 1}),
                )
            ),
            CallTool("read_file", {"path": 42}),
            Reply("Sorry, my tool calls were broken."),
        ]
    )
    events, history = await h.turn("Read x.txt")
    malformed, unknown, invalid = tool_messages(history)
    assert malformed.is_error and "json" in malformed.text.lower()
    assert unknown.is_error and "unknown tool" in unknown.text.lower()
    assert invalid.is_error and "path" in invalid.text
    assert isinstance(events[-1], TurnDone)
    assert events[-1].text == "Sorry, my tool calls were broken."


async def test_read_only_autonomy_denies_bash_without_asking(make_harness: Make) -> None:
    h: Harness = await make_harness(
        [CallTool("bash", {"command": "touch pwned"}), Reply("I may not run commands.")],
        autonomy=Autonomy.READ_ONLY,
    )
    events, history = await h.turn("Run touch")
    assert not any(isinstance(e, ApprovalRequested) for e in events)
    (result,) = tool_messages(history)
    assert result.is_error and result.text.startswith("Denied")
    assert not (h.workspace / "pwned").exists()
    assert isinstance(events[-1], TurnDone)


async def test_a_per_agent_deny_list_hides_the_tool_from_the_provider(make_harness: Make) -> None:
    settings = ToolsSettings.model_validate({"agents": {"default": {"deny": ["bash", "web_*"]}}})
    h: Harness = await make_harness(
        [CallTool("bash", {"command": "echo hi"}), Reply("ok")],
        autonomy=Autonomy.FULL,
        tools_settings=settings,
    )
    _events, history = await h.turn("hello")
    offered = {t.name for t in h.provider.calls[0].options.tools}
    assert "read_file" in offered
    assert not offered & {"bash", "web_fetch"}
    (result,) = tool_messages(history)
    assert result.is_error and "unknown tool" in result.text.lower()


async def test_skills_section_in_the_prompt_and_git_promoted(make_harness: Make) -> None:
    create_agent("default")
    h: Harness = await make_harness([Reply("Use git log."), Reply("Hello!")], system_prompt=None)
    await h.turn("How do I see the git history of this repository?")
    await h.turn("Good morning")
    first, second = (
        "\n".join(m.text for m in call.messages if m.role is Role.SYSTEM)
        for call in h.provider.calls
    )
    assert "## Skills" in first
    assert "Skill: memory-keeper" in first  # always included in full
    assert "Skill: git" in first  # named by the message: promoted to full content
    assert "Skill: git" not in second
    assert "- 🌿 git:" in second  # otherwise only listed
