from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from typing import Any

import pytest
from pydantic import Field

from beamclaw_obs import EventType, get_emitter
from beamclaw_tools import (
    Autonomy,
    SessionRef,
    ToolArgs,
    ToolCall,
    ToolDef,
    ToolNameCollisionError,
    ToolOutput,
    ToolPolicy,
    ToolRegistry,
    ToolsSettings,
    TypedTool,
    make_definition,
)


class EchoArgs(ToolArgs):
    text: str = Field(description="what to echo")
    times: int = 1


class Echo(TypedTool[EchoArgs]):
    def __init__(self, name: str = "echo", source: str = "builtin", cap: int | None = None) -> None:
        super().__init__(
            EchoArgs,
            make_definition(
                name,
                "Echo text.",
                EchoArgs,
                source=source,
                timeout_seconds=2,
                max_output_chars=cap,
            ),
        )

    async def run(self, args: EchoArgs, session: SessionRef) -> ToolOutput:
        return ToolOutput.ok(args.text * args.times)


class Raw:
    """A tool implementing the bare protocol (as MCP tools do)."""

    def __init__(self, name: str, behaviour: str, source: str = "mcp:srv") -> None:
        self._def = ToolDef(name=name, description="raw", source=source, timeout_seconds=0.2)
        self._behaviour = behaviour

    @property
    def definition(self) -> ToolDef:
        return self._def

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        if self._behaviour == "crash":
            raise RuntimeError("boom")
        if self._behaviour == "hang":
            await asyncio.sleep(3600)
        if self._behaviour == "leak":
            return ToolOutput.ok("token: sk-abcdefghijklmnopqrstuvwxyz012345 done")
        return ToolOutput.ok("raw ok")


def call(name: str, **kw: Any) -> ToolCall:
    return ToolCall(id="c1", name=name, **kw)


def test_collision_refused_and_same_source_replace() -> None:
    reg = ToolRegistry()
    reg.register(Echo())
    with pytest.raises(ToolNameCollisionError) as info:
        reg.register(Echo(source="mcp:x"))
    assert info.value.existing_source == "builtin"
    assert info.value.new_source == "mcp:x"
    with pytest.raises(ToolNameCollisionError):
        reg.register(Echo(source="mcp:x"), replace=True)  # another source's name
    reg.register(Echo(), replace=True)
    with pytest.raises(ToolNameCollisionError):
        reg.register_many([Echo("a"), Echo("a")])
    assert "a" not in reg  # all or nothing


def test_unregister_and_unregister_source() -> None:
    reg = ToolRegistry()
    reg.register_many([Echo(), Raw("t1", "ok"), Raw("t2", "ok"), Raw("u", "ok", "mcp:other")])
    assert reg.unregister_source("mcp:srv") == ["t1", "t2"]
    assert reg.names() == ["echo", "u"]
    assert reg.unregister("u")
    assert not reg.unregister("u")


def test_listed_definitions_follow_every_change() -> None:
    reg = ToolRegistry()
    policy = ToolPolicy(allow=("*",), deny=("t2",))
    reg.register(Echo())
    assert [d.name for d in reg.definitions(policy)] == ["echo"]
    reg.register_many([Raw("t1", "ok"), Raw("t2", "ok")])
    assert [d.name for d in reg.definitions(policy)] == ["echo", "t1"]
    replaced = Raw("t1", "crash")
    reg.register(replaced, replace=True)
    assert reg.definitions(policy)[1] is replaced.definition
    reg.unregister("echo")
    assert [d.name for d in reg.definitions(ToolPolicy(allow=("*",), deny=("t2",)))] == ["t1"]
    reg.unregister_source("mcp:srv")
    assert reg.definitions(policy) == []
    reg.definitions(policy).append(Echo().definition)  # a caller's list is its own
    assert reg.definitions(policy) == []


def test_schema_export_from_one_source() -> None:
    reg = ToolRegistry()
    reg.register(Echo())
    (oa,) = reg.openai_schemas()
    (an,) = reg.anthropic_schemas()
    assert oa["type"] == "function"
    assert oa["function"]["name"] == an["name"] == "echo"
    assert oa["function"]["parameters"] == an["input_schema"]
    params = an["input_schema"]
    assert params["required"] == ["text"]
    assert params["properties"]["text"] == {"description": "what to echo", "type": "string"}
    assert params["additionalProperties"] is False
    assert "title" not in params


def test_policy_globs_filter_definitions_and_calls() -> None:
    reg = ToolRegistry.with_builtins()
    settings = ToolsSettings.model_validate(
        {
            "disabled": ["terminal"],
            "agents": {"reader": {"allow": ["read_*", "list_dir", "bash"], "deny": ["bash"]}},
        }
    )
    policy = ToolPolicy.for_agent(settings, "reader")
    assert [d.name for d in reg.definitions(policy)] == ["list_dir", "read_file"]
    assert "terminal" not in [d.name for d in reg.definitions(ToolPolicy.for_agent(settings, "x"))]


async def test_ungranted_tool_is_unknown(session: SessionRef) -> None:
    reg = ToolRegistry.with_builtins()
    result = await reg.execute(
        call("bash", args={"command": "echo hi"}), session, policy=ToolPolicy(allow=("read_file",))
    )
    assert result.is_error
    assert "unknown tool 'bash'" in result.content
    assert "read_file" in result.content


async def test_unknown_malformed_and_invalid_args(session: SessionRef) -> None:
    reg = ToolRegistry()
    reg.register(Echo())
    r = await reg.execute(call("nope"), session)
    assert r.is_error
    assert "unknown tool 'nope'" in r.content
    assert "echo" in r.content
    r = await reg.execute(call("echo", raw_args='{"text": "hi"'), session)
    assert r.is_error
    assert "not valid JSON" in r.content
    r = await reg.execute(call("echo", raw_args="[1, 2]"), session)
    assert r.is_error
    assert "must be a JSON object" in r.content
    r = await reg.execute(call("echo", raw_args='{"text": "hi"}'), session)
    assert not r.is_error
    assert r.content == "hi"
    r = await reg.execute(call("echo", args={}), session)
    assert r.is_error
    assert "text: required argument is missing" in r.content
    r = await reg.execute(call("echo", args={"text": "x", "times": "many", "bogus": 1}), session)
    assert r.is_error
    assert "times: Input should be a valid integer" in r.content
    assert "bogus: unknown argument" in r.content


async def test_crash_and_timeout_become_errors(session: SessionRef) -> None:
    reg = ToolRegistry()
    reg.register_many([Raw("crash", "crash"), Raw("hang", "hang")])
    r = await reg.execute(call("crash"), session)
    assert r.is_error
    assert "RuntimeError: boom" in r.content
    r = await reg.execute(call("hang"), session)
    assert r.is_error
    assert "timed out after 0.2 s" in r.content


async def test_output_is_scrubbed_and_capped(session: SessionRef) -> None:
    reg = ToolRegistry(max_output_chars=100)
    reg.register_many([Raw("leak", "leak"), Echo(cap=None), Echo("small", cap=10)])
    r = await reg.execute(call("leak"), session)
    assert "sk-abc" not in r.content
    assert "[REDACTED]" in r.content
    r = await reg.execute(call("echo", args={"text": "y" * 1000}), session)
    assert "[... truncated: 900 of 1000 characters omitted ...]" in r.content
    assert len(r.content) < 200
    r = await reg.execute(call("small", args={"text": "z" * 50}), session)
    assert "40 of 50 characters omitted" in r.content


async def test_events_carry_scrubbed_args(session: SessionRef, recorder: Any) -> None:
    reg = ToolRegistry()
    reg.register(Echo())
    await reg.execute(call("echo", args={"text": "api_key=supersecretvalue"}), session)
    assert get_emitter().flush()
    start = [e for e in recorder.events if e.type is EventType.TOOL_CALL_START]
    done = [e for e in recorder.events if e.type is EventType.TOOL_CALL_RESULT]
    assert start[-1].data["args"] == {"text": "api_key=[REDACTED]"}
    assert start[-1].data["session_id"] == "s-1"
    assert start[-1].data["tool_name"] == "echo"
    assert done[-1].data["success"] is True
    assert done[-1].data["duration_ms"] >= 0


def test_builtin_policies_follow_the_seeds() -> None:
    defs = {d.name: d for d in ToolRegistry.with_builtins().definitions()}
    approval = {
        "bash",
        "terminal",
        "write_file",
        "edit_file",
        "delete_file",
        "apply_patch",
        "http_request",
    }
    for name, d in defs.items():
        assert d.requires_approval == (name in approval), name
        expected = Autonomy.SUPERVISED if name in approval else Autonomy.READ_ONLY
        assert d.min_autonomy is expected, name
    assert "web_search" not in defs  # no key configured


def test_extra_tools_extension_point() -> None:
    reg = ToolRegistry.with_builtins(extra=[Echo("memory_search")])
    assert "memory_search" in reg
    with pytest.raises(ToolNameCollisionError):
        ToolRegistry.with_builtins(extra=[Echo("bash")])


def test_listed_stays_the_same_object_until_the_tools_change() -> None:
    reg = ToolRegistry()
    reg.register(Echo())
    first = reg.listed()
    assert reg.listed() is first
    reg.register(Raw("t1", "ok"))
    assert reg.listed() is not first
    assert [d.name for d in reg.listed()] == ["echo", "t1"]


_REGISTER = """
import json, os, sys
from beamclaw_tools import ToolRegistry, ToolsSettings
os.environ["BRAVE_API_KEY"] = "fake-brave-key"
settings = ToolsSettings.model_validate({"web_search": {"api_key": {"env": "BRAVE_API_KEY"}}})
registry = ToolRegistry.with_builtins(settings)
heavy = ("bs4", "soupsieve", "markdownify", "httpx")
before = sorted(m for m in heavy if m in sys.modules)
from beamclaw_tools.builtin import html_to_markdown
page = html_to_markdown("<html><title>T</title><body><nav>menu</nav><p>Hi</p></body></html>")
print(json.dumps([before, "web_fetch" in registry, "web_search" in registry, page,
                  "bs4" in sys.modules]))
"""


def test_registering_the_builtins_loads_no_html_parser_nor_http_client() -> None:
    """BeautifulSoup, markdownify and httpx load when a page is parsed or fetched, not when
    the gateway registers ``web_fetch``/``web_search``/``http_request``."""
    r = subprocess.run(
        [sys.executable, "-c", _REGISTER], capture_output=True, text=True, check=False
    )
    assert r.returncode == 0, r.stderr
    before, fetch, search, page, parsed = json.loads(r.stdout)
    assert before == []
    assert fetch and search
    assert page == "# T\n\nHi"
    assert parsed
