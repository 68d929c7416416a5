"""beamclaw-tools: tool protocol and types, registry, built-in tools, path rules."""

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
    ImagePart,
    SessionRef,
    TextPart,
    Tool,
    ToolCall,
    ToolDef,
    ToolOutput,
    ToolResult,
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
