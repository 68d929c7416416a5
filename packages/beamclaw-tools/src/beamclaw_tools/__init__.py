"""beamclaw-tools: tool protocol and types, registry, built-in tools, path rules."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_tools.base import ToolArgs, TypedTool, describe_validation_error, make_definition
    from beamclaw_tools.builtin import builtin_tools
    from beamclaw_tools.builtin.process import ProcessResult, child_environment, run_process
    from beamclaw_tools.errors import (
        BeamclawToolsError,
        FetchError,
        InvalidAgentIdError,
        MemoryInputRejectedError,
        MemoryUnavailableError,
        PatchError,
        PathOutsideRootsError,
        ToolNameCollisionError,
        UnknownToolError,
        UnsafeAddressError,
    )
    from beamclaw_tools.fetch import FetchedResponse, guarded_fetch
    from beamclaw_tools.memory_port import (
        MemoryHitView,
        MemoryPort,
        MemorySearchView,
        StoredMemoryView,
    )
    from beamclaw_tools.netguard import (
        AllowRule,
        NetworkPolicy,
        Resolver,
        address_class,
        address_refusal,
        system_resolver,
    )
    from beamclaw_tools.output import TRUNCATION_MARKER, truncate, truncation_marker
    from beamclaw_tools.paths import (
        WorkspaceRoots,
        agent_workspace,
        is_binary,
        session_workspace,
        validate_agent_id,
    )
    from beamclaw_tools.policy import ALLOW_ALL, ToolPolicy
    from beamclaw_tools.registry import ToolRegistry, decode_call_args
    from beamclaw_tools.schemas import anthropic_tool, args_schema, openai_tool
    from beamclaw_tools.settings import (
        AgentToolsSettings,
        FileToolsSettings,
        HttpRequestSettings,
        JqSettings,
        KeywordSearchSettings,
        NetworkSettings,
        ShellSettings,
        ToolsSettings,
        WebFetchSettings,
        WebSearchSettings,
    )
    from beamclaw_tools.types import (
        Autonomy,
        ContentPart,
        FilePart,
        ImagePart,
        SessionRef,
        TextPart,
        Tool,
        ToolCall,
        ToolDef,
        ToolOutput,
        ToolResult,
    )
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_tools.base": (
                "ToolArgs",
                "TypedTool",
                "describe_validation_error",
                "make_definition",
            ),
            "beamclaw_tools.builtin": ("builtin_tools",),
            "beamclaw_tools.builtin.process": ("ProcessResult", "child_environment", "run_process"),
            "beamclaw_tools.errors": (
                "BeamclawToolsError",
                "FetchError",
                "InvalidAgentIdError",
                "MemoryInputRejectedError",
                "MemoryUnavailableError",
                "PatchError",
                "PathOutsideRootsError",
                "ToolNameCollisionError",
                "UnknownToolError",
                "UnsafeAddressError",
            ),
            "beamclaw_tools.fetch": ("FetchedResponse", "guarded_fetch"),
            "beamclaw_tools.memory_port": (
                "MemoryHitView",
                "MemoryPort",
                "MemorySearchView",
                "StoredMemoryView",
            ),
            "beamclaw_tools.netguard": (
                "AllowRule",
                "NetworkPolicy",
                "Resolver",
                "address_class",
                "address_refusal",
                "system_resolver",
            ),
            "beamclaw_tools.output": ("TRUNCATION_MARKER", "truncate", "truncation_marker"),
            "beamclaw_tools.paths": (
                "WorkspaceRoots",
                "agent_workspace",
                "is_binary",
                "session_workspace",
                "validate_agent_id",
            ),
            "beamclaw_tools.policy": ("ALLOW_ALL", "ToolPolicy"),
            "beamclaw_tools.registry": ("ToolRegistry", "decode_call_args"),
            "beamclaw_tools.schemas": ("anthropic_tool", "args_schema", "openai_tool"),
            "beamclaw_tools.settings": (
                "AgentToolsSettings",
                "FileToolsSettings",
                "HttpRequestSettings",
                "JqSettings",
                "KeywordSearchSettings",
                "NetworkSettings",
                "ShellSettings",
                "ToolsSettings",
                "WebFetchSettings",
                "WebSearchSettings",
            ),
            "beamclaw_tools.types": (
                "Autonomy",
                "ContentPart",
                "FilePart",
                "ImagePart",
                "SessionRef",
                "TextPart",
                "Tool",
                "ToolCall",
                "ToolDef",
                "ToolOutput",
                "ToolResult",
            ),
        },
    )

__version__ = "0.1.0"
__all__ = [
    "ALLOW_ALL",
    "TRUNCATION_MARKER",
    "AgentToolsSettings",
    "AllowRule",
    "Autonomy",
    "BeamclawToolsError",
    "ContentPart",
    "FetchError",
    "FetchedResponse",
    "FilePart",
    "FileToolsSettings",
    "HttpRequestSettings",
    "ImagePart",
    "InvalidAgentIdError",
    "JqSettings",
    "KeywordSearchSettings",
    "MemoryHitView",
    "MemoryInputRejectedError",
    "MemoryPort",
    "MemorySearchView",
    "MemoryUnavailableError",
    "NetworkPolicy",
    "NetworkSettings",
    "PatchError",
    "PathOutsideRootsError",
    "ProcessResult",
    "Resolver",
    "SessionRef",
    "ShellSettings",
    "StoredMemoryView",
    "TextPart",
    "Tool",
    "ToolArgs",
    "ToolCall",
    "ToolDef",
    "ToolNameCollisionError",
    "ToolOutput",
    "ToolPolicy",
    "ToolRegistry",
    "ToolResult",
    "ToolsSettings",
    "TypedTool",
    "UnknownToolError",
    "UnsafeAddressError",
    "WebFetchSettings",
    "WebSearchSettings",
    "WorkspaceRoots",
    "__version__",
    "address_class",
    "address_refusal",
    "agent_workspace",
    "anthropic_tool",
    "args_schema",
    "builtin_tools",
    "child_environment",
    "decode_call_args",
    "describe_validation_error",
    "guarded_fetch",
    "is_binary",
    "make_definition",
    "openai_tool",
    "run_process",
    "session_workspace",
    "system_resolver",
    "truncate",
    "truncation_marker",
    "validate_agent_id",
]
