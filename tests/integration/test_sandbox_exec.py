"""The sandbox in the whole system (issue 21): a gateway runtime with ``[sandbox]
enabled`` on the real Docker engine, a scripted model calling ``exec`` through the real
loop, approvals, ``/health``, the container going with its session, and a gateway whose
Docker does not answer."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import docker
import pytest

from beamclaw_core.loop import ApprovalRequested, ToolFinished, TurnDone
from beamclaw_core.messages import Message
from beamclaw_core.providers import CompletionOptions
from beamclaw_core.skills.parser import parse_skill
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_gateway.runtime import GatewayRuntime
from beamclaw_gateway.testing import quiet_config
from beamclaw_obs import beamclaw_home
from beamclaw_sandbox import BeamclawSandboxError
from beamclaw_sandbox.hardening import OWNER_LABEL, SANDBOX_LABEL
from beamclaw_sandbox.skills import skill_markdown
from beamclaw_sandbox.testing import require_image
from beamclaw_tools import Autonomy

from .conftest import ADDRESS


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    try:
        return require_image().image
    except BeamclawSandboxError as e:
        pytest.fail(f"{e} (`make services` installs and starts Docker)")


def containers_of(owner: str) -> list[dict[str, str]]:
    client = docker.DockerClient(base_url="unix:///var/run/docker.sock")
    try:
        found = client.api.containers(
            all=True, filters={"label": [f"{SANDBOX_LABEL}=1", f"{OWNER_LABEL}={owner}"]}
        )
        return [dict(c["Labels"]) for c in found]
    finally:
        client.close()


def _answer(messages: Sequence[Message], options: CompletionOptions) -> Reply:
    return Reply(f"The sandbox said: {messages[-1].text}")


def runtime_for(provider: ScriptedProvider, autonomy: Autonomy, **sandbox: Any) -> GatewayRuntime:
    config = quiet_config()
    config.core.autonomy_level = autonomy
    config.sandbox.enabled = True
    for key, value in sandbox.items():
        setattr(config.sandbox, key, value)
    return GatewayRuntime(config, provider_factory=lambda _agent: provider)


@pytest.mark.docker
async def test_the_model_runs_code_in_the_sandbox_and_the_container_ends_with_the_session(
    sandbox_image: str,
) -> None:
    provider = ScriptedProvider(
        [CallTool("exec", {"script": "print(sum(range(101)))"}), _answer, Reply("fresh")]
    )
    runtime = runtime_for(provider, Autonomy.FULL, image=sandbox_image)
    await runtime.start()
    try:
        system = runtime.system
        assert system is not None and system.sandbox is not None
        assert runtime.health.snapshot()["sandbox"].as_dict()["status"] == "up"
        handle = await runtime.core.send(ADDRESS, "add 0..100 in the sandbox")
        events = [e async for e in handle.events()]
        offered = {t.name for t in provider.calls[0].options.tools}
        assert "exec" in offered and not offered & {"bash", "terminal"}
        (finished,) = [e for e in events if isinstance(e, ToolFinished)]
        assert (finished.tool, finished.is_error) == ("exec", False)
        done = events[-1]
        assert isinstance(done, TurnDone)
        assert done.text == "The sandbox said: [exit status 0]\nstdout:\n5050"
        (labels,) = containers_of(system.sandbox.owner)
        assert labels["org.beamclaw.sandbox.key"] == f"session:{handle.session_id}"
        # a fresh context (/new) ends the session's sandbox with it
        await (await runtime.core.send(ADDRESS, "/new")).result()
        for _ in range(100):
            if not containers_of(system.sandbox.owner):
                break
            await asyncio.sleep(0.05)
        assert containers_of(system.sandbox.owner) == []
        owner = system.sandbox.owner
    finally:
        await runtime.stop()
    assert containers_of(owner) == []


@pytest.mark.docker
async def test_a_script_calls_the_gateways_tools_through_the_bridge(sandbox_image: str) -> None:
    script = (
        "from beamclaw_bridge import BridgeError, call_tool, search_tools\n"
        "print(call_tool('write_file', path='note.txt', content='from the sandbox'))\n"
        "print(call_tool('read_file', path='note.txt'))\n"
        "try:\n"
        "    call_tool('bash', command='id')\n"
        "except BridgeError as e:\n"
        "    print('refused:', e.code)\n"
        "print(sorted(t['name'] for t in search_tools('file'))[:3])\n"
    )
    provider = ScriptedProvider([CallTool("exec", {"script": script}), _answer])
    runtime = runtime_for(provider, Autonomy.FULL, image=sandbox_image)
    await runtime.start()
    try:
        handle = await runtime.core.send(ADDRESS, "use your tools from a script")
        done = [e async for e in handle.events()][-1]
        assert isinstance(done, TurnDone)
        assert "[exit status 0]" in done.text, done.text
        assert "from the sandbox" in done.text
        assert "refused: -32002" in done.text  # bash: denied by the bridge rules
        workspace = beamclaw_home() / "agents" / ADDRESS.agent_id
        assert (workspace / "note.txt").read_text() == "from the sandbox"
    finally:
        await runtime.stop()


@pytest.mark.docker
async def test_exec_waits_for_approval_and_a_refusal_runs_nothing(sandbox_image: str) -> None:
    provider = ScriptedProvider([CallTool("exec", {"script": "print('ran')"}), _answer])
    runtime = runtime_for(provider, Autonomy.SUPERVISED, image=sandbox_image)
    await runtime.start()
    try:
        system = runtime.system
        assert system is not None and system.sandbox is not None
        handle = await runtime.core.send(ADDRESS, "run it")
        asked = False
        async for event in handle.events():
            if isinstance(event, ApprovalRequested):
                asked = event.tool == "exec"
                await runtime.core.answer_approval(handle.session_id, event.request_id, "no")
        assert asked
        assert containers_of(system.sandbox.owner) == []  # nothing was created
        (history_result,) = [m for m in await runtime.core.history(handle.session_id) if m.name]
        assert history_result.is_error
    finally:
        await runtime.stop()


async def test_without_docker_exec_is_not_offered_and_health_says_why() -> None:
    provider = ScriptedProvider([Reply("no tools for you")])
    runtime = runtime_for(provider, Autonomy.FULL, docker_url="unix:///nonexistent/docker.sock")
    await runtime.start()
    try:
        health = runtime.health.snapshot()["sandbox"].as_dict()
        assert health["status"] == "down"
        assert "no Docker socket at /nonexistent/docker.sock" in health["detail"]
        await (await runtime.core.send(ADDRESS, "hi")).result()
        offered = {t.name for t in provider.calls[0].options.tools}
        assert "exec" not in offered
        assert not offered & {"bash", "terminal"}  # enabled: the host shell stays off
    finally:
        await runtime.stop()


async def test_host_shell_stays_when_explicitly_allowed() -> None:
    provider = ScriptedProvider([Reply("ok")])
    runtime = runtime_for(
        provider,
        Autonomy.FULL,
        docker_url="unix:///nonexistent/docker.sock",
        allow_host_shell=True,
    )
    await runtime.start()
    try:
        await (await runtime.core.send(ADDRESS, "hi")).result()
        offered = {t.name for t in provider.calls[0].options.tools}
        assert {"bash", "terminal"} <= offered
    finally:
        await runtime.stop()


def test_a_sandbox_skill_file_is_a_core_skill() -> None:
    skill = parse_skill(skill_markdown("hello", "Say hi", "python", "print('hi')"))
    assert (skill.name, skill.description) == ("hello", "Say hi")
    assert '"skill": "hello"' in skill.body
