"""beamclaw-tools: tool protocol and types, registry, built-in tools, path rules."""

from beamclaw_tools.errors import (
    BeamclawToolsError,
    PathOutsideRootsError,
    ToolNameCollisionError,
    UnknownToolError,
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
    "Autonomy",
    "BeamclawToolsError",
    "ContentPart",
    "ImagePart",
    "PathOutsideRootsError",
    "SessionRef",
    "TextPart",
    "Tool",
    "ToolCall",
    "ToolDef",
    "ToolNameCollisionError",
    "ToolOutput",
    "ToolResult",
    "UnknownToolError",
    "__version__",
]
