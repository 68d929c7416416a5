"""Text parsing helpers from the seeds: the tool-call fallback chain and the thinking stripper.

Both are pure and deterministic, so the loop machine may call them.
"""

from beamclaw_core.parsing.code_regions import CodeRegion, find_code_regions
from beamclaw_core.parsing.ids import IdFactory, canonical_args, default_id_factory, make_id_factory
from beamclaw_core.parsing.thinking import StrippedText, has_thinking_tags, strip_thinking
from beamclaw_core.parsing.tool_calls import ParsedToolCalls, ParseSource, parse_tool_calls

__all__ = [
    "CodeRegion",
    "IdFactory",
    "ParseSource",
    "ParsedToolCalls",
    "StrippedText",
    "canonical_args",
    "default_id_factory",
    "find_code_regions",
    "has_thinking_tags",
    "make_id_factory",
    "parse_tool_calls",
    "strip_thinking",
]
