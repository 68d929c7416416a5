"""Pure parts of the MCP host: settings, schemas, names, results, grants, the catalog."""

from __future__ import annotations

from typing import Any

import mcp.types as mt
import pytest
from pydantic import ValidationError

from beamclaw_mcp import (
    GrantPolicy,
    MCPServerSettings,
    MCPSettings,
    assign_names,
    sanitize_schema,
    to_tool_output,
)
from beamclaw_mcp.naming import safe_tool_name
from beamclaw_obs import REDACTED, register_secret
from beamclaw_tools import ImagePart, ToolDef

PNG = "iVBORw0KGgo="


def test_transport_is_inferred_and_checked() -> None:
    assert MCPServerSettings(name="a", command="x").resolved_transport == "stdio"
    assert MCPServerSettings(name="b", url="http://h/mcp").resolved_transport == "streamable_http"
    sse = MCPServerSettings(name="c", url="http://h/sse", transport="sse")
    assert sse.resolved_transport == "sse"
    with pytest.raises(ValidationError, match="needs 'url'"):
        MCPServerSettings(name="d", command="x", transport="sse")
    with pytest.raises(ValidationError, match="needs 'command'"):
        MCPServerSettings(name="e")
    with pytest.raises(ValidationError, match="letters, digits"):
        MCPServerSettings(name="bad name", command="x")


def test_duplicate_server_names_are_rejected() -> None:
    with pytest.raises(ValidationError, match="duplicate MCP server name 'a'"):
        MCPSettings.model_validate(
            {"servers": [{"name": "a", "command": "x"}, {"name": "a", "command": "y"}]}
        )


def test_secrets_in_env_and_headers_parse() -> None:
    s = MCPServerSettings.model_validate(
        {"name": "a", "url": "http://h", "headers": {"Authorization": {"env": "TOKEN_VAR"}}}
    )
    header = s.headers["Authorization"]
    assert not isinstance(header, str)
    assert header.env == "TOKEN_VAR"


def test_schema_sanitiser_fixes_what_providers_reject() -> None:
    raw: dict[str, Any] = {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "properties": {
            "a": True,
            "b": {"$ref": "#/$defs/B", "description": "bee"},
            "c": {"type": "array", "items": {"$ref": "#/definitions/C"}},
        },
        "$defs": {"B": {"type": "integer"}},
        "definitions": {"C": {"type": "string"}},
        "required": ["a", "missing"],
    }
    out = sanitize_schema(raw)
    assert out == {
        "type": "object",
        "properties": {
            "a": {},
            "b": {"type": "integer", "description": "bee"},
            "c": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["a"],
    }
    assert "$defs" in raw  # the input is not mutated


def test_schema_sanitiser_makes_an_object_schema() -> None:
    assert sanitize_schema({"type": "string"}) == {"type": "object", "properties": {}}
    assert sanitize_schema(None) == {"type": "object", "properties": {}}
    assert sanitize_schema({"properties": {"x": {"type": "number"}}}) == {
        "properties": {"x": {"type": "number"}},
        "type": "object",
    }


def test_recursive_ref_is_bounded() -> None:
    raw = {
        "type": "object",
        "properties": {"node": {"$ref": "#/$defs/N"}},
        "$defs": {"N": {"type": "object", "properties": {"next": {"$ref": "#/$defs/N"}}}},
    }
    out = sanitize_schema(raw)
    depth = 0
    node: dict[str, Any] = out["properties"]["node"]
    while "properties" in node:
        node = node["properties"]["next"]
        depth += 1
    assert 1 <= depth <= 10


def test_names_are_plain_when_unique_and_qualified_on_collision() -> None:
    names = assign_names([("time", "now"), ("git", "status"), ("other", "status")])
    assert names[("time", "now")] == "now"
    assert names[("git", "status")] == "git__status"
    assert names[("other", "status")] == "other__status"
    qualified = assign_names([("time", "now")], frozenset({"time"}))
    assert qualified[("time", "now")] == "time__now"


def test_tool_names_become_provider_safe() -> None:
    assert safe_tool_name("weird.name with spaces") == "weird_name_with_spaces"
    long_a, long_b = safe_tool_name("a" * 80), safe_tool_name("a" * 81)
    assert len(long_a) == 64
    assert long_a != long_b


def _result(*content: Any, **kw: Any) -> mt.CallToolResult:
    return mt.CallToolResult(content=list(content), **kw)


def test_result_text_images_and_errors() -> None:
    out = to_tool_output(
        _result(mt.TextContent(text="hi"), mt.ImageContent(data=PNG, mime_type="image/png")),
        max_chars=1000,
        max_image_bytes=1000,
    )
    assert out.content == "hi\n[image: image/png]"
    assert out.parts == (ImagePart(media_type="image/png", data=PNG),)
    assert not out.is_error
    err = to_tool_output(
        _result(mt.TextContent(text="bad"), is_error=True), max_chars=100, max_image_bytes=10
    )
    assert err.is_error
    assert err.content == "bad"


def test_structured_only_result_is_readable() -> None:
    out = to_tool_output(
        _result(structured_content={"answer": 42}), max_chars=100, max_image_bytes=10
    )
    assert out.structured == {"answer": 42}
    assert out.content == '{"answer": 42}'


def test_huge_result_is_capped_with_a_marker() -> None:
    out = to_tool_output(
        _result(mt.TextContent(text="x" * 5000)), max_chars=100, max_image_bytes=10
    )
    assert out.content.startswith("x" * 100 + "\n")
    assert "4900 of 5000 characters omitted" in out.content
    assert len(out.content) < 200


def test_oversized_image_is_dropped_with_a_note() -> None:
    out = to_tool_output(
        _result(mt.ImageContent(data="A" * 50, mime_type="image/png")),
        max_chars=100,
        max_image_bytes=10,
    )
    assert out.parts == ()
    assert "exceeds the 10 limit" in out.content


def test_results_are_scrubbed() -> None:
    register_secret("s3cr3t-value-123")
    out = to_tool_output(
        _result(
            mt.TextContent(text="key is s3cr3t-value-123 and sk-ant-abcdefghijklmnop"),
            structured_content={"token": "s3cr3t-value-123"},
        ),
        max_chars=1000,
        max_image_bytes=10,
    )
    assert "s3cr3t" not in out.content
    assert "sk-ant-abc" not in out.content
    assert out.content.count(REDACTED) == 2
    assert out.structured == {"token": REDACTED}


def test_grants_combine_server_agents_and_grant_table() -> None:
    s = MCPSettings.model_validate(
        {
            "servers": [
                {"name": "time", "command": "x"},
                {"name": "git", "command": "y", "agents": ["coder"]},
                {"name": "fs", "command": "z"},
            ],
            "grants": {"helper": ["time"], "admin": ["*"]},
        }
    )
    g = GrantPolicy(s)
    assert g.servers_for("default") == ("time", "fs")
    assert g.servers_for("coder") == ("time", "git", "fs")
    assert g.servers_for("helper") == ("time",)
    assert g.servers_for("admin") == ("time", "fs")
    builtin = ToolDef(name="read_file", description="d")
    git_tool = ToolDef(name="git_status", description="d", source="mcp:git")
    assert g.allows_tool("helper", builtin)
    assert not g.allows_tool("helper", git_tool)
    assert g.allows_tool("coder", git_tool)
