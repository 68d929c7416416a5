"""What the indexer reads from workspaces and transcripts."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_memory.indexing.sources import (
        BOOTSTRAP_FILES,
        Lines,
        Piece,
        WorkspaceFile,
        as_message,
        content_hash,
        file_pieces,
        keyed_chunks,
        markdown_chunks,
        markdown_pieces,
        message_chunks,
        transcript_position,
        workspace_files,
    )
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_memory.indexing.sources": (
                "BOOTSTRAP_FILES",
                "Lines",
                "Piece",
                "WorkspaceFile",
                "as_message",
                "content_hash",
                "file_pieces",
                "keyed_chunks",
                "markdown_chunks",
                "markdown_pieces",
                "message_chunks",
                "transcript_position",
                "workspace_files",
            ),
        },
    )

__all__ = [
    "BOOTSTRAP_FILES",
    "Lines",
    "Piece",
    "WorkspaceFile",
    "as_message",
    "content_hash",
    "file_pieces",
    "keyed_chunks",
    "markdown_chunks",
    "markdown_pieces",
    "message_chunks",
    "transcript_position",
    "workspace_files",
]
