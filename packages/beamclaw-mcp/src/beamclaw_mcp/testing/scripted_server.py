"""A stdio MCP server for tests, built on the SDK's low-level ``Server``.

Tools (listed two per page, so clients must follow ``nextCursor``):

* ``echo(text)`` → the text; ``image()`` → a text block and a PNG;
* ``huge(chars)`` → a text of that many characters;
* ``broken()`` → ``isError`` with a message; ``structured()`` → structured content only;
* ``slow(seconds)`` → sleeps; if the call is cancelled it writes ``cancelled`` to the file
  named by ``$FIXTURE_CANCEL_FILE``;
* ``grow()`` → adds a tool ``extra`` and sends ``notifications/tools/list_changed``;
* ``die()`` → the process exits at once (a crash mid-call);
* ``weird.schema()`` → a dotted name and a schema with ``$ref``, ``$defs``, a boolean
  sub-schema and a dangling ``required`` entry.

Misbehaving servers (never answering, invalid JSON-RPC) are in ``broken_server``.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import anyio
import mcp.types as mt
from mcp.server.lowlevel.server import NotificationOptions, Server
from mcp.server.stdio import stdio_server

PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
    "hQGAhKmMIQAAAABJRU5ErkJggg=="
)
PAGE = 2
_extra = False


def _tools() -> list[mt.Tool]:
    obj: dict[str, Any] = {"type": "object", "properties": {}}
    tools = [
        mt.Tool(
            name="echo",
            description="Echo text back.",
            input_schema={
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
                "$schema": "http://json-schema.org/draft-07/schema#",
            },
        ),
        mt.Tool(name="image", description="Return an image.", input_schema=obj),
        mt.Tool(
            name="huge",
            description="Return a lot of text.",
            input_schema={"type": "object", "properties": {"chars": {"type": "integer"}}},
        ),
        mt.Tool(name="broken", description="Always fails.", input_schema=obj),
        mt.Tool(name="structured", description="Structured only.", input_schema=obj),
        mt.Tool(
            name="slow",
            description="Sleep.",
            input_schema={"type": "object", "properties": {"seconds": {"type": "number"}}},
        ),
        mt.Tool(name="grow", description="Add a tool.", input_schema=obj),
        mt.Tool(name="die", description="Exit the process.", input_schema=obj),
        mt.Tool(
            name="weird.schema",
            description="A schema providers reject as is.",
            input_schema={
                "type": "object",
                "$schema": "https://json-schema.org/draft/2020-12/schema",
                "properties": {"a": True, "b": {"$ref": "#/$defs/B"}},
                "$defs": {"B": {"type": "integer"}},
                "required": ["a", "missing"],
            },
        ),
    ]
    if _extra:
        tools.append(mt.Tool(name="extra", description="Appeared later.", input_schema=obj))
    return tools


async def list_tools(ctx: Any, params: mt.PaginatedRequestParams | None) -> mt.ListToolsResult:
    tools = _tools()
    start = int(params.cursor) if params and params.cursor else 0
    page = tools[start : start + PAGE]
    nxt = str(start + PAGE) if start + PAGE < len(tools) else None
    return mt.ListToolsResult(tools=page, next_cursor=nxt)


def _text(text: str) -> mt.CallToolResult:
    return mt.CallToolResult(content=[mt.TextContent(text=text)])


async def call_tool(ctx: Any, params: mt.CallToolRequestParams) -> mt.CallToolResult:
    global _extra
    args = params.arguments or {}
    name = params.name
    if name == "echo":
        return _text(str(args.get("text", "")))
    if name == "image":
        return mt.CallToolResult(
            content=[
                mt.TextContent(text="a pixel:"),
                mt.ImageContent(data=PNG, mime_type="image/png"),
            ]
        )
    if name == "huge":
        return _text("x" * int(args.get("chars", 10)))
    if name == "broken":
        return mt.CallToolResult(content=[mt.TextContent(text="it broke")], is_error=True)
    if name == "structured":
        return mt.CallToolResult(content=[], structured_content={"answer": 42})
    if name == "slow":
        try:
            await anyio.sleep(float(args.get("seconds", 30)))
        except anyio.get_cancelled_exc_class():
            marker = os.environ.get("FIXTURE_CANCEL_FILE")
            if marker:
                Path(marker).write_text("cancelled")  # noqa: ASYNC240 - a test marker
            raise
        return _text("slept")
    if name == "grow":
        _extra = True
        await ctx.session.send_tool_list_changed()
        return _text("grown")
    if name == "die":
        os._exit(3)
    if name == "extra":
        return _text("extra!")
    return _text(f"unknown {name}")


async def main() -> None:
    pid_file = os.environ.get("FIXTURE_PID_FILE")
    if pid_file:
        Path(pid_file).write_text(str(os.getpid()))  # noqa: ASYNC240 - a test marker
    server: Server[Any] = Server("scripted", on_list_tools=list_tools, on_call_tool=call_tool)
    options = server.create_initialization_options(NotificationOptions(tools_changed=True))
    async with stdio_server() as (read, write):
        await server.run(read, write, options)


if __name__ == "__main__":
    anyio.run(main)
