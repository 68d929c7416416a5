"""The ``exec`` tool through the tool registry on the real engine: its definition, runs,
the timeout cap, skills saved with ``save_as`` and run by name."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from beamclaw_sandbox import ExecTool, Sandbox
from beamclaw_tools import Autonomy, SessionRef, ToolCall, ToolRegistry

pytestmark = pytest.mark.docker


async def registry_for(make_sandbox: Callable[..., Any], **settings: Any) -> ToolRegistry:
    sandbox: Sandbox = await make_sandbox(**settings)
    registry = ToolRegistry()
    registry.register(ExecTool(sandbox))
    return registry


def call(**args: Any) -> ToolCall:
    return ToolCall(id="c1", name="exec", args=args)


@pytest.fixture
def session(tmp_path: Path) -> SessionRef:
    workspace = tmp_path / "agents" / "default"
    workspace.mkdir(parents=True)
    return SessionRef(session_id="s-1", agent_id="default", workspace=workspace)


async def test_the_definition_asks_for_approval_and_supervised_autonomy(
    make_sandbox: Callable[..., Any],
) -> None:
    registry = await registry_for(make_sandbox)
    (definition,) = registry.definitions()
    assert definition.name == "exec" and definition.source == "sandbox"
    assert definition.requires_approval and definition.min_autonomy is Autonomy.SUPERVISED
    props = definition.parameters["properties"]
    assert {"script", "language", "timeout", "save_as", "skill"} <= set(props)


async def test_a_run_reports_output_and_status(
    make_sandbox: Callable[..., Any], session: SessionRef
) -> None:
    registry = await registry_for(make_sandbox)
    result = await registry.execute(call(script="print(6 * 7)"), session)
    assert (result.content, result.is_error) == ("[exit status 0]\nstdout:\n42", False)
    assert result.structured is not None and result.structured["exit_status"] == 0
    failed = await registry.execute(call(script="echo no >&2; exit 4", language="bash"), session)
    assert failed.is_error and failed.content == "[exit status 4]\nstderr:\nno"


async def test_the_timeout_asked_for_is_capped(
    make_sandbox: Callable[..., Any], session: SessionRef
) -> None:
    registry = await registry_for(make_sandbox, max_timeout_seconds=1.5)
    result = await registry.execute(
        call(script="import time; time.sleep(60)", timeout=1000), session
    )
    assert result.is_error and "[timed out after 1.5 s" in result.content


async def test_oversized_scripts_are_refused(
    make_sandbox: Callable[..., Any], session: SessionRef
) -> None:
    registry = await registry_for(make_sandbox, max_script_bytes=100)
    result = await registry.execute(call(script="#" * 200), session)
    assert result.is_error and "exceeds 100 bytes" in result.content


async def test_save_as_keeps_a_successful_script_as_a_skill_run_by_name(
    make_sandbox: Callable[..., Any], session: SessionRef
) -> None:
    registry = await registry_for(make_sandbox)
    assert session.workspace is not None
    script = "import sys\nprint('words:', len(sys.version.split()))"
    saved = await registry.execute(
        call(script=script, save_as="count-words", description="Counts words"), session
    )
    assert "[saved as sandbox skill 'count-words'" in saved.content
    skill_file = session.workspace / "skills" / "count-words" / "SKILL.md"
    assert "type: sandbox_script" in skill_file.read_text()
    again = await registry.execute(call(skill="count-words"), session)
    assert again.content.startswith("[exit status 0]\nstdout:\nwords:")
    refused = await registry.execute(call(script="raise SystemExit(1)", save_as="bad"), session)
    assert "[not saved as 'bad'" in refused.content
    assert not (session.workspace / "skills" / "bad").exists()
    unknown = await registry.execute(call(skill="nope"), session)
    assert unknown.is_error and "no sandbox skill named 'nope'" in unknown.content


async def test_the_description_mentions_the_bridge_only_when_there_is_one(
    make_sandbox: Callable[..., Any],
) -> None:
    from beamclaw_sandbox import ToolBridge

    plain = ExecTool(await make_sandbox())
    assert "beamclaw_bridge" not in plain.definition.description
    bridged = ExecTool(await make_sandbox(bridge=ToolBridge(ToolRegistry(), rules=["allow:*"])))
    assert "from beamclaw_bridge import call_tool" in bridged.definition.description
