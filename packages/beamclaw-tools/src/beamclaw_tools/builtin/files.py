"""File tools: ``read_file``, ``write_file``, ``edit_file``, ``delete_file``, ``list_dir``.

Every path goes through :class:`~beamclaw_tools.paths.WorkspaceRoots` (agent workspace
plus ``[tools.files] extra_roots``). Binary files are refused by the reading tools.
Writes are atomic (temporary file in the same directory, then rename). Reading tools
need no approval at ``read_only`` (seed 000 ADR-011); writing tools require approval and
``supervised``.
"""

from __future__ import annotations

import os
import stat
import tempfile
from pathlib import Path

from pydantic import Field

from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.errors import FileToolError, PathOutsideRootsError
from beamclaw_tools.paths import BINARY_SNIFF_BYTES, WorkspaceRoots, is_binary
from beamclaw_tools.settings import FileToolsSettings
from beamclaw_tools.types import Autonomy, SessionRef, ToolOutput


def read_text(path: Path, display: str, max_bytes: int) -> tuple[str, bool]:
    """Read a text file (at most ``max_bytes``); refuse binaries and non-files."""
    if not path.exists():
        raise FileToolError(f"{display}: no such file")
    if path.is_dir():
        raise FileToolError(f"{display} is a directory (use list_dir)")
    if not path.is_file():
        raise FileToolError(f"{display} is not a regular file")
    try:
        with path.open("rb") as fh:
            data = fh.read(max_bytes + 1)
    except OSError as e:
        raise FileToolError(f"{display}: cannot read: {e.strerror}") from e
    if is_binary(data[:BINARY_SNIFF_BYTES]):
        size = path.stat().st_size
        raise FileToolError(
            f"{display} is a binary file ({size} bytes); only text files can be read"
        )
    truncated = len(data) > max_bytes
    return data[:max_bytes].decode("utf-8", errors="replace"), truncated


def write_atomic(path: Path, text: str) -> None:
    """Replace ``path`` with ``text`` atomically, keeping an existing file's mode."""
    mode = stat.S_IMODE(path.stat().st_mode) if path.exists() else 0o644
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


class _FileTool:
    def __init__(self, settings: FileToolsSettings) -> None:
        self._files = settings

    def _roots(self, session: SessionRef) -> WorkspaceRoots:
        return WorkspaceRoots.for_session(session, self._files.extra_roots)


# ---------------------------------------------------------------------- read_file
class ReadFileArgs(ToolArgs):
    path: str = Field(description="File path, relative to the workspace or absolute.")
    offset: int = Field(default=1, ge=1, description="First line to return (1-based).")
    limit: int | None = Field(default=None, ge=1, description="Number of lines to return.")


class ReadFileTool(_FileTool, TypedTool[ReadFileArgs]):
    def __init__(self, settings: FileToolsSettings) -> None:
        _FileTool.__init__(self, settings)
        TypedTool.__init__(
            self,
            ReadFileArgs,
            make_definition(
                "read_file",
                "Read a UTF-8 text file inside the workspace (optionally a range of lines).",
                ReadFileArgs,
                timeout_seconds=settings.timeout_seconds,
                max_output_chars=settings.max_output_chars,
            ),
        )

    async def run(self, args: ReadFileArgs, session: SessionRef) -> ToolOutput:
        roots = self._roots(session)
        try:
            path = roots.resolve(args.path)
            text, truncated = read_text(path, args.path, self._files.max_read_bytes)
        except (PathOutsideRootsError, FileToolError) as e:
            return ToolOutput.error(str(e))
        if args.offset > 1 or args.limit is not None:
            lines = text.splitlines(keepends=True)
            end = None if args.limit is None else args.offset - 1 + args.limit
            selected = lines[args.offset - 1 : end]
            if not selected and lines:
                return ToolOutput.error(
                    f"{args.path} has {len(lines)} lines; offset {args.offset} is past the end"
                )
            text = "".join(selected)
        if truncated:
            limit = self._files.max_read_bytes
            text += f"\n[... file larger than {limit} bytes; rest not read ...]"
        return ToolOutput.ok(text)


# ---------------------------------------------------------------------- write_file
class WriteFileArgs(ToolArgs):
    path: str = Field(description="File path, relative to the workspace or absolute.")
    content: str = Field(description="The complete new content of the file.")
    create_dirs: bool = Field(default=True, description="Create missing parent directories.")


class WriteFileTool(_FileTool, TypedTool[WriteFileArgs]):
    def __init__(self, settings: FileToolsSettings) -> None:
        _FileTool.__init__(self, settings)
        TypedTool.__init__(
            self,
            WriteFileArgs,
            make_definition(
                "write_file",
                "Create or overwrite a text file inside the workspace with the given content.",
                WriteFileArgs,
                requires_approval=True,
                min_autonomy=Autonomy.SUPERVISED,
                timeout_seconds=settings.timeout_seconds,
            ),
        )

    async def run(self, args: WriteFileArgs, session: SessionRef) -> ToolOutput:
        size = len(args.content.encode("utf-8"))
        if size > self._files.max_write_bytes:
            return ToolOutput.error(
                f"content is {size} bytes; the limit is {self._files.max_write_bytes}"
            )
        roots = self._roots(session)
        try:
            path = roots.resolve(args.path)
        except PathOutsideRootsError as e:
            return ToolOutput.error(str(e))
        if path.is_dir():
            return ToolOutput.error(f"{args.path} is a directory")
        if not path.parent.is_dir():
            if not args.create_dirs:
                return ToolOutput.error(f"directory of {args.path} does not exist")
            path.parent.mkdir(parents=True, exist_ok=True)
        existed = path.exists()
        try:
            write_atomic(path, args.content)
        except OSError as e:
            return ToolOutput.error(f"{args.path}: cannot write: {e.strerror}")
        verb = "overwrote" if existed else "created"
        return ToolOutput.ok(f"{verb} {roots.display(path)} ({size} bytes)")


# ---------------------------------------------------------------------- edit_file
class EditFileArgs(ToolArgs):
    path: str = Field(description="File to edit.")
    old_text: str = Field(min_length=1, description="Exact text to replace (must be unique).")
    new_text: str = Field(description="Replacement text.")
    replace_all: bool = Field(default=False, description="Replace every occurrence.")


class EditFileTool(_FileTool, TypedTool[EditFileArgs]):
    def __init__(self, settings: FileToolsSettings) -> None:
        _FileTool.__init__(self, settings)
        TypedTool.__init__(
            self,
            EditFileArgs,
            make_definition(
                "edit_file",
                "Replace an exact, unique piece of text in a file. Fails when the text is "
                "missing or appears more than once (unless replace_all is true).",
                EditFileArgs,
                requires_approval=True,
                min_autonomy=Autonomy.SUPERVISED,
                timeout_seconds=settings.timeout_seconds,
            ),
        )

    async def run(self, args: EditFileArgs, session: SessionRef) -> ToolOutput:
        roots = self._roots(session)
        try:
            path = roots.resolve(args.path)
            text, truncated = read_text(path, args.path, self._files.max_write_bytes)
        except (PathOutsideRootsError, FileToolError) as e:
            return ToolOutput.error(str(e))
        if truncated:
            limit = self._files.max_write_bytes
            return ToolOutput.error(f"{args.path} is larger than {limit} bytes")
        count = text.count(args.old_text)
        if count == 0:
            return ToolOutput.error(f"old_text not found in {args.path}; nothing changed")
        if count > 1 and not args.replace_all:
            return ToolOutput.error(
                f"old_text appears {count} times in {args.path}; include more surrounding "
                "context to make it unique (or set replace_all); nothing changed"
            )
        updated = text.replace(args.old_text, args.new_text)
        try:
            write_atomic(path, updated)
        except OSError as e:
            return ToolOutput.error(f"{args.path}: cannot write: {e.strerror}")
        plural = "s" if count > 1 else ""
        return ToolOutput.ok(f"replaced {count} occurrence{plural} in {roots.display(path)}")


# ---------------------------------------------------------------------- delete_file
class DeleteFileArgs(ToolArgs):
    path: str = Field(description="File (or empty directory) to delete.")


class DeleteFileTool(_FileTool, TypedTool[DeleteFileArgs]):
    def __init__(self, settings: FileToolsSettings) -> None:
        _FileTool.__init__(self, settings)
        TypedTool.__init__(
            self,
            DeleteFileArgs,
            make_definition(
                "delete_file",
                "Delete a file or an empty directory inside the workspace.",
                DeleteFileArgs,
                requires_approval=True,
                min_autonomy=Autonomy.SUPERVISED,
                timeout_seconds=settings.timeout_seconds,
            ),
        )

    async def run(self, args: DeleteFileArgs, session: SessionRef) -> ToolOutput:
        roots = self._roots(session)
        try:
            path = roots.resolve(args.path)
        except PathOutsideRootsError as e:
            return ToolOutput.error(str(e))
        if path in roots.roots:
            return ToolOutput.error(f"{args.path} is a workspace root and cannot be deleted")
        try:
            if path.is_dir():
                path.rmdir()
            elif path.exists():
                path.unlink()
            else:
                return ToolOutput.error(f"{args.path}: no such file")
        except OSError as e:
            return ToolOutput.error(f"{args.path}: cannot delete: {e.strerror}")
        return ToolOutput.ok(f"deleted {roots.display(path)}")


# ---------------------------------------------------------------------- list_dir
class ListDirArgs(ToolArgs):
    path: str = Field(default=".", description="Directory to list.")
    depth: int = Field(default=1, ge=1, le=10, description="How many levels to descend.")
    max_entries: int = Field(default=500, ge=1, le=5000)


class ListDirTool(_FileTool, TypedTool[ListDirArgs]):
    def __init__(self, settings: FileToolsSettings) -> None:
        _FileTool.__init__(self, settings)
        TypedTool.__init__(
            self,
            ListDirArgs,
            make_definition(
                "list_dir",
                "List a directory inside the workspace: directories end with '/', files show "
                "their size in bytes.",
                ListDirArgs,
                timeout_seconds=settings.timeout_seconds,
                max_output_chars=settings.max_output_chars,
            ),
        )

    async def run(self, args: ListDirArgs, session: SessionRef) -> ToolOutput:
        roots = self._roots(session)
        try:
            base = roots.resolve(args.path)
        except PathOutsideRootsError as e:
            return ToolOutput.error(str(e))
        if not base.exists() and base == roots.primary:
            base.mkdir(parents=True, exist_ok=True)
        if not base.is_dir():
            return ToolOutput.error(f"{args.path} is not a directory")
        lines: list[str] = []
        omitted = 0

        def walk(directory: Path, level: int, prefix: str) -> None:
            nonlocal omitted
            try:
                entries = sorted(directory.iterdir(), key=lambda p: p.name)
            except OSError as e:
                lines.append(f"{prefix}[cannot list: {e.strerror}]")
                return
            for entry in entries:
                if len(lines) >= args.max_entries:
                    omitted += 1
                    continue
                if entry.is_symlink():
                    lines.append(f"{prefix}{entry.name}@ -> {os.readlink(entry)}")
                elif entry.is_dir():
                    lines.append(f"{prefix}{entry.name}/")
                    if level < args.depth:
                        walk(entry, level + 1, prefix + "  ")
                else:
                    lines.append(f"{prefix}{entry.name} ({entry.stat().st_size})")

        walk(base, 1, "")
        if not lines:
            return ToolOutput.ok(f"{roots.display(base)} is empty")
        if omitted:
            lines.append(f"[... {omitted} more entries not shown (max_entries) ...]")
        return ToolOutput.ok("\n".join(lines))
