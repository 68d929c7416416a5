"""What the indexer reads from workspaces and transcripts."""

from beamclaw_memory.indexing.sources import (
    BOOTSTRAP_FILES,
    WorkspaceFile,
    as_message,
    content_hash,
    keyed_chunks,
    markdown_chunks,
    message_chunks,
    workspace_files,
)

__all__ = [
    "BOOTSTRAP_FILES",
    "WorkspaceFile",
    "as_message",
    "content_hash",
    "keyed_chunks",
    "markdown_chunks",
    "message_chunks",
    "workspace_files",
]
