"""CoreConversationBackend over a real Core: the MCP backend's error contract and waits."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from beamclaw_core.api import Core
from beamclaw_core.settings import CoreSettings
from beamclaw_core.testing import CallTool, Hang, Reply, ScriptedProvider
from beamclaw_gateway.errors import GatewayConfigError
from beamclaw_gateway.mcp_backend import CoreConversationBackend
from beamclaw_gateway.mcp_serve import check_mcp_bind_policy
from beamclaw_mcp.serve import ConversationBackend
from beamclaw_memory import Database
from beamclaw_tools import Autonomy, SessionRef, ToolDef, ToolOutput, ToolRegistry


class Guarded:
    definition = ToolDef(
        name="guarded",
        description="needs approval",
        requires_approval=True,
        min_autonomy=Autonomy.SUPERVISED,
    )

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        return ToolOutput.ok("ran")


@pytest.fixture
async def make_backend(tmp_path: Path) -> AsyncIterator[Any]:
    made: list[tuple[Core, Database]] = []

    async def factory(provider: ScriptedProvider) -> CoreConversationBackend:
        settings = CoreSettings()
        settings.queue.debounce_ms = 0
        settings.reset.daily_hour = None
        tools = ToolRegistry()
        tools.register(Guarded())
        db = Database(f"sqlite:///{tmp_path / 'b.db'}")
        core = Core.create(settings, db, provider=provider, tools=tools, system_prompt="t")
        await core.start(maintenance=False)
        made.append((core, db))
        return CoreConversationBackend(core, default_agent="default", follow_seconds=10)

    yield factory
    for core, db in made:
        await core.stop()
        await db.dispose()


async def test_backend_satisfies_the_port(make_backend: Any) -> None:
    backend = await make_backend(ScriptedProvider([]))
    assert isinstance(backend, ConversationBackend)


async def test_unknown_ids_raise_lookup_error(make_backend: Any) -> None:
    backend: CoreConversationBackend = await make_backend(ScriptedProvider([]))
    with pytest.raises(LookupError, match="no conversation 'nope'"):
        await backend.read_messages("nope")
    with pytest.raises(LookupError):
        await backend.send_message_and_wait("nope", "hi")
    with pytest.raises(LookupError, match="no pending approval"):
        await backend.respond_to_approval("r-1", approve=True)
    with pytest.raises(LookupError):
        await backend.list_pending_approvals("nope")


async def test_send_to_an_existing_conversation_of_another_agent_is_refused(
    make_backend: Any,
) -> None:
    backend: CoreConversationBackend = await make_backend(ScriptedProvider([Reply("a")]))
    sent = await backend.send_message_and_wait(None, "hi")
    with pytest.raises(ValueError, match="belongs to agent 'default'"):
        await backend.send_message_and_wait(sent.conversation_id, "x", agent="other")


async def test_a_turn_without_answer_in_time_raises_timeout(make_backend: Any) -> None:
    backend: CoreConversationBackend = await make_backend(ScriptedProvider([Hang()]))
    with pytest.raises(TimeoutError, match="the turn goes on"):
        await backend.send_message_and_wait(None, "hi", wait_seconds=0.2)


async def test_denied_approval_continues_the_turn(make_backend: Any) -> None:
    provider = ScriptedProvider([CallTool("guarded", {}), Reply("Understood, not running it.")])
    backend: CoreConversationBackend = await make_backend(provider)
    waiting = await backend.send_message_and_wait(None, "run it")
    assert waiting.state == "awaiting_approval"
    (pending,) = await backend.list_pending_approvals(waiting.conversation_id)
    outcome = await backend.respond_to_approval(pending.id, approve=False)
    assert (outcome.approved, outcome.state) == (False, "idle")
    messages = await backend.read_messages(waiting.conversation_id)
    assert [m.role for m in messages] == ["user", "assistant", "tool", "assistant"]
    assert messages[1].content == "[tool call guarded {}]"
    assert messages[2].tool_name == "guarded"
    assert "Denied" in messages[2].content
    assert messages[-1].content == "Understood, not running it."
    assert await backend.list_pending_approvals() == []
    with pytest.raises(LookupError):
        await backend.respond_to_approval(pending.id, approve=True)
    older = await backend.read_messages(
        waiting.conversation_id, limit=1, before_sequence=messages[-1].sequence
    )
    assert [m.role for m in older] == ["tool"]


def test_http_mode_refuses_a_public_bind_without_a_token() -> None:
    check_mcp_bind_policy("127.0.0.1", None)
    check_mcp_bind_policy("0.0.0.0", "secret-token")
    with pytest.raises(GatewayConfigError, match="without a token"):
        check_mcp_bind_policy("0.0.0.0", None)
