"""The tool bridge on the real engine: a script discovers tools in /tools and calls them,
many times and from several threads at once; the rules, the agent's policy and the
session's approvals refuse what they must; garbage on the socket gets an error, not a
crash."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Collection
from pathlib import Path
from typing import Any

import docker
import pytest
from pydantic import Field

from beamclaw_sandbox import ExecTool, Sandbox
from beamclaw_sandbox.bridge import SOCKET_NAME, ToolBridge
from beamclaw_sandbox.bridge_protocol import MAX_FRAME
from beamclaw_tools import (
    Autonomy,
    SessionRef,
    ToolArgs,
    ToolOutput,
    ToolPolicy,
    ToolRegistry,
    TypedTool,
    make_definition,
)

pytestmark = pytest.mark.docker


class EchoArgs(ToolArgs):
    text: str = Field(description="What to echo.")


class EchoTool(TypedTool[EchoArgs]):
    def __init__(self, name: str = "echo", *, approval: bool = False) -> None:
        super().__init__(
            EchoArgs,
            make_definition(
                name, f"Echo the text back ({name}).", EchoArgs, requires_approval=approval
            ),
        )
        self.calls: list[str] = []

    async def run(self, args: EchoArgs, session: SessionRef) -> ToolOutput:
        self.calls.append(args.text)
        await asyncio.sleep(0.01)
        return ToolOutput.ok(f"{self.definition.name}:{args.text}:{session.session_id}")


def session(autonomy: Autonomy = Autonomy.SUPERVISED) -> SessionRef:
    return SessionRef(session_id="s-1", agent_id="default", autonomy=autonomy)


async def bridged(
    make_sandbox: Callable[..., Any],
    *,
    grants: Collection[str] = (),
    policy: ToolPolicy | None = None,
    **settings: Any,
) -> tuple[Sandbox, ToolRegistry, EchoTool]:
    registry = ToolRegistry()
    echo = EchoTool()
    registry.register_many([echo, EchoTool("guarded", approval=True), EchoTool("hidden")])

    async def granted(_s: SessionRef) -> Collection[str]:
        return grants

    bridge = ToolBridge(
        registry,
        rules=settings.pop("rules", ["deny:exec", "deny:bash", "deny:terminal", "allow:*"]),
        policy_for=lambda _agent: policy or ToolPolicy(deny=("hidden",)),
        grants=granted,
    )
    sandbox: Sandbox = await make_sandbox(bridge=bridge, **settings)
    registry.register(ExecTool(sandbox))
    return sandbox, registry, echo


async def test_a_script_discovers_and_calls_tools_many_times_and_concurrently(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox, _registry, echo = await bridged(make_sandbox)
    script = """
import json, threading
from beamclaw_bridge import call_tool, search_tools, get_tool_schema
print(open("/tools/index.txt").read().strip())
print(json.load(open("/tools/echo/schema.json"))["required"])
print([t["name"] for t in search_tools("echo")])
print(get_tool_schema("echo")["parameters"]["properties"]["text"]["type"])
print([call_tool("echo", text=str(i)) for i in range(3)])
results = []
def worker(n):
    for i in range(5):
        results.append(call_tool("echo", text=f"t{n}-{i}"))
threads = [threading.Thread(target=worker, args=(n,)) for n in range(6)]
[t.start() for t in threads]; [t.join() for t in threads]
print(len(results), len(set(results)))
"""
    outcome = await sandbox.run("k", script, "python", 60, session())
    assert outcome.exit_status == 0, outcome.stderr
    lines = outcome.stdout.splitlines()
    assert "echo - Echo the text back (echo)." in lines
    assert not any(line.startswith("exec ") for line in lines)  # the rules deny it
    assert "['text']" in lines
    # search applies the agent's policy too: neither 'hidden' nor 'exec'
    assert lines[-4] == "['echo', 'guarded']"
    assert lines[-3] == "string"
    assert lines[-2] == "['echo:0:s-1', 'echo:1:s-1', 'echo:2:s-1']"
    assert lines[-1] == "30 30"
    assert len(echo.calls) == 33


async def test_rules_policy_and_approvals_refuse_calls(make_sandbox: Callable[..., Any]) -> None:
    sandbox, _registry, echo = await bridged(make_sandbox)
    script = """
from beamclaw_bridge import BridgeError, call_tool
for name in ("exec", "hidden", "guarded", "nonexistent"):
    try:
        call_tool(name, text="x", script="print(1)")
        print(name, "RAN")
    except BridgeError as e:
        print(name, e.code, e)
"""
    outcome = await sandbox.run("k", script, "python", 30, session())
    out = outcome.stdout
    assert "RAN" not in out, out
    assert "exec -32002 tool 'exec' is unknown or not permitted here" in out
    assert "hidden -32002" in out
    assert "guarded -32002 guarded needs approval, which a script cannot ask for" in out
    assert "nonexistent -32002" in out
    assert echo.calls == []


async def test_a_standing_grant_or_full_autonomy_lets_a_guarded_tool_run(
    make_sandbox: Callable[..., Any], tmp_path: Path
) -> None:
    script = "from beamclaw_bridge import call_tool\nprint(call_tool('guarded', text='ok'))"
    granted, _r, _e = await bridged(make_sandbox, grants=["guarded"])
    assert (await granted.run("k", script, "python", 30, session())).stdout == "guarded:ok:s-1\n"
    full, _r2, _e2 = await bridged(make_sandbox, home=tmp_path / "other")
    out = await full.run("k2", script, "python", 30, session(Autonomy.FULL))
    assert out.stdout == "guarded:ok:s-1\n"
    read_only = await full.run("k2", script, "python", 30, session(Autonomy.READ_ONLY))
    assert "read-only" in read_only.stderr


async def test_tool_errors_and_bad_arguments_come_back_as_tool_errors(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox, _registry, _echo = await bridged(make_sandbox)
    script = """
from beamclaw_bridge import ToolError, call_tool
try:
    call_tool("echo", wrong=1)
except ToolError as e:
    print("tool error:", e)
"""
    outcome = await sandbox.run("k", script, "python", 30, session())
    assert "tool error: invalid arguments for echo" in outcome.stdout


async def test_the_bridge_directories_are_read_only_inside(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox, _registry, _echo = await bridged(make_sandbox)
    script = "touch /tools/x 2>/dev/null && echo WROTE || echo refused; ls /run/beamclaw"
    outcome = await sandbox.run("k", script, "bash", 10, session())
    assert outcome.stdout == f"refused\n{SOCKET_NAME}\n"
    assert sandbox.pool is not None and sandbox.bridge is not None
    client = docker.DockerClient(base_url="unix:///var/run/docker.sock")
    try:
        binds = client.api.inspect_container(sandbox.pool.spec("k").name)["HostConfig"]["Binds"]
    finally:
        client.close()
    assert sorted(binds) == sorted(
        [f"{sandbox.bridge.socket_dir}:/run/beamclaw:ro", f"{sandbox.bridge.tools_dir}:/tools:ro"]
    )
    assert not any("docker.sock" in b for b in binds)


async def request(path: Path, payload: bytes) -> bytes:
    reader, writer = await asyncio.open_unix_connection(str(path))
    try:
        writer.write(payload)
        await writer.drain()
        return await asyncio.wait_for(reader.read(65536), 5)
    finally:
        writer.close()
        await writer.wait_closed()


def frame(body: bytes) -> bytes:
    return len(body).to_bytes(4, "big") + body


async def test_garbage_and_missing_tokens_get_errors_and_the_bridge_keeps_serving(
    make_sandbox: Callable[..., Any],
) -> None:
    sandbox, _registry, _echo = await bridged(make_sandbox)
    assert sandbox.bridge is not None
    path = sandbox.bridge.socket_dir / SOCKET_NAME
    not_json = await request(path, frame(b"\x00\xffnot json"))
    assert json.loads(not_json[4:])["error"]["code"] == -32700
    not_rpc = await request(path, frame(b"[1, 2]"))
    assert json.loads(not_rpc[4:])["error"]["code"] == -32600
    huge = await request(path, (MAX_FRAME + 1).to_bytes(4, "big") + b"x")
    assert "exceeds" in json.loads(huge[4:])["error"]["message"]
    no_token = frame(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "search_tools"}).encode())
    answer = json.loads((await request(path, no_token))[4:])
    assert (answer["id"], answer["error"]["code"]) == (7, -32001)
    # a token is valid only while its run lasts
    token = sandbox.bridge.open_run(session())
    sandbox.bridge.close_run(token)
    late = frame(
        json.dumps(
            {"jsonrpc": "2.0", "id": 8, "method": "search_tools", "params": {"token": token}}
        ).encode()
    )
    assert json.loads((await request(path, late))[4:])["error"]["code"] == -32001
    # and scripts still get through
    outcome = await sandbox.run(
        "k",
        "from beamclaw_bridge import call_tool\nprint(call_tool('echo', text='y'))",
        "python",
        30,
        session(),
    )
    assert outcome.stdout == "echo:y:s-1\n"


class LookupArgs(ToolArgs):
    email: str


class LookupTool(TypedTool[LookupArgs]):
    """A directory: returns a phone number the model has never seen."""

    def __init__(self) -> None:
        super().__init__(
            LookupArgs, make_definition("lookup", "Phone number of a person.", LookupArgs)
        )
        self.seen: list[str] = []

    async def run(self, args: LookupArgs, session: SessionRef) -> ToolOutput:
        self.seen.append(args.email)
        return ToolOutput.ok(f"{args.email}: +44 20 7946 0958")


async def test_pii_round_trip(make_sandbox: Callable[..., Any]) -> None:
    """The container sees tokens, the tool real values, the model only what it knew."""
    sandbox, registry, _echo = await bridged(make_sandbox)
    lookup = LookupTool()
    registry.register(lookup)
    script = """
from beamclaw_bridge import call_tool
import sys
email = "ann@example.com"
print("inside:", email)
print("result:", call_tool("lookup", email=email))
"""
    outcome = await sandbox.run("k", script, "python", 30, session())
    assert outcome.exit_status == 0, outcome.stderr
    assert lookup.seen == ["ann@example.com"]  # the tool got the real value
    lines = outcome.stdout.splitlines()
    assert lines[0] == "inside: ann@example.com"  # known to the model: shown back
    assert lines[1].startswith("result: ann@example.com: PII_PHONE_")  # new: stays a token
    assert "7946" not in outcome.stdout
    # inside, the script held only the token: upper() of the real address would print
    # ANN@EXAMPLE.COM; upper() of PII_EMAIL_n is itself, shown back as the known value
    raw = await sandbox.run("k", "print('ann@example.com'.upper())", "python", 30, session())
    assert raw.stdout == "ann@example.com\n"
