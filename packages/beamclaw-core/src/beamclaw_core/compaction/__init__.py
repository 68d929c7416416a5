"""Context compaction: summary into a view marker, deterministic trim on failure."""

from beamclaw_core.compaction.compactor import (
    SUMMARY_INSTRUCTIONS,
    Compactor,
    render,
    split_point,
)
from beamclaw_core.compaction.flush import FLUSH_INSTRUCTIONS, FlushOutcome, memory_flush

__all__ = [
    "FLUSH_INSTRUCTIONS",
    "SUMMARY_INSTRUCTIONS",
    "Compactor",
    "FlushOutcome",
    "memory_flush",
    "render",
    "split_point",
]
