"""The built-in tools (seed 001/002/003 tool sets) and :func:`builtin_tools`.

One module per tool or tool family. ``builtin_tools`` builds every tool the settings
enable; other packages' tools (the memory helper's ``memory_search``/``memory_store``,
scheduler, sandbox …) are passed in through ``extra`` by the composition root, so this
package never imports upward or probes for optional modules.
"""

from __future__ import annotations

from collections.abc import Iterable

from beamclaw_tools.builtin.apply_patch import ApplyPatchArgs, ApplyPatchTool
from beamclaw_tools.builtin.files import (
    DeleteFileArgs,
    DeleteFileTool,
    EditFileArgs,
    EditFileTool,
    ListDirArgs,
    ListDirTool,
    ReadFileArgs,
    ReadFileTool,
    WriteFileArgs,
    WriteFileTool,
)
from beamclaw_tools.builtin.http_request import HttpRequestArgs, HttpRequestTool
from beamclaw_tools.builtin.jq_tool import JqArgs, JqTool
from beamclaw_tools.builtin.keyword_search import KeywordSearchArgs, KeywordSearchTool
from beamclaw_tools.builtin.memory_tools import MemorySearchTool, MemoryStoreTool, memory_tools
from beamclaw_tools.builtin.process import child_environment
from beamclaw_tools.builtin.shell import BashArgs, BashTool, TerminalArgs, TerminalTool
from beamclaw_tools.builtin.think import ThinkArgs, ThinkTool
from beamclaw_tools.builtin.web import (
    WebFetchArgs,
    WebFetchTool,
    WebSearchArgs,
    WebSearchTool,
    html_to_markdown,
)
from beamclaw_tools.builtin.workspace_memory import (
    BOOTSTRAP_DELETABLE,
    BOOTSTRAP_READABLE,
    BOOTSTRAP_UPDATABLE,
    WorkspaceMemoryArgs,
    WorkspaceMemoryTool,
)
from beamclaw_tools.memory_port import MemoryPort
from beamclaw_tools.netguard import Resolver, system_resolver
from beamclaw_tools.policy import ToolPolicy
from beamclaw_tools.settings import ToolsSettings
from beamclaw_tools.types import Tool


def builtin_tools(
    settings: ToolsSettings | None = None,
    memory: MemoryPort | None = None,
    *,
    extra: Iterable[Tool] = (),
    resolver: Resolver = system_resolver,
) -> list[Tool]:
    """Every built-in tool ``[tools] enabled``/``disabled`` permits, then ``extra``.

    Args:
        settings: the ``[tools]`` section (defaults when None).
        memory: the :class:`~beamclaw_tools.memory_port.MemoryPort` behind ``workspace_memory``
            ``search`` and the ``memory_search``/``memory_store`` pair (offered only when
            it is given).
        extra: tools from other packages, wired in by the composition root.
        resolver: DNS resolver for the SSRF guard of ``http_request``/``web_fetch``.
    """
    s = settings or ToolsSettings()
    tools: list[Tool] = [
        BashTool(s.bash, s.files),
        TerminalTool(s.terminal, s.files),
        HttpRequestTool(s.http_request, resolver),
        JqTool(s.jq, s.files),
        ReadFileTool(s.files),
        WriteFileTool(s.files),
        EditFileTool(s.files),
        DeleteFileTool(s.files),
        ListDirTool(s.files),
        KeywordSearchTool(s.keyword_search, s.files),
        ApplyPatchTool(s.files),
        ThinkTool(),
        WebFetchTool(s.web_fetch, resolver),
        WorkspaceMemoryTool(memory),
    ]
    if memory is not None:
        tools.extend(memory_tools(memory))
    if s.web_search.api_key is not None and s.web_search.api_key.is_available():
        tools.append(WebSearchTool(s.web_search))
    tools.extend(extra)
    offered = ToolPolicy(tuple(s.enabled), tuple(s.disabled))
    return [t for t in tools if offered.permits(t.definition.name)]


__all__ = [
    "BOOTSTRAP_DELETABLE",
    "BOOTSTRAP_READABLE",
    "BOOTSTRAP_UPDATABLE",
    "ApplyPatchArgs",
    "ApplyPatchTool",
    "BashArgs",
    "BashTool",
    "DeleteFileArgs",
    "DeleteFileTool",
    "EditFileArgs",
    "EditFileTool",
    "HttpRequestArgs",
    "HttpRequestTool",
    "JqArgs",
    "JqTool",
    "KeywordSearchArgs",
    "KeywordSearchTool",
    "ListDirArgs",
    "ListDirTool",
    "MemorySearchTool",
    "MemoryStoreTool",
    "ReadFileArgs",
    "ReadFileTool",
    "TerminalArgs",
    "TerminalTool",
    "ThinkArgs",
    "ThinkTool",
    "WebFetchArgs",
    "WebFetchTool",
    "WebSearchArgs",
    "WebSearchTool",
    "WorkspaceMemoryArgs",
    "WorkspaceMemoryTool",
    "WriteFileArgs",
    "WriteFileTool",
    "builtin_tools",
    "child_environment",
    "html_to_markdown",
    "memory_tools",
]
