"""What the indexer reads from workspaces and transcripts."""

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
    workspace_files,
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
    "workspace_files",
]
