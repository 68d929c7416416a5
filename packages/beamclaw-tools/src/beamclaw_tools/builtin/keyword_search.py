"""``keyword_search``: grep-like search over the allowed roots (seed 002 tool set).

Literal (default) or regular-expression patterns; limits on files scanned, file size and
matches; binary files, and symlinks leading outside the roots, are skipped. Hidden
directories (``.git`` …) are skipped unless ``include_hidden``. The scan runs in a worker
thread so the event loop is never blocked.
"""

from __future__ import annotations

import asyncio
import fnmatch
import os
import re
from collections.abc import Iterator
from pathlib import Path

from pydantic import Field

from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.errors import PathOutsideRootsError
from beamclaw_tools.paths import BINARY_SNIFF_BYTES, WorkspaceRoots, is_binary
from beamclaw_tools.settings import FileToolsSettings, KeywordSearchSettings
from beamclaw_tools.types import SessionRef, ToolOutput

MAX_LINE_CHARS = 300


class KeywordSearchArgs(ToolArgs):
    pattern: str = Field(min_length=1, description="Text (or regex with regex=true) to find.")
    path: str = Field(default=".", description="File or directory to search.")
    regex: bool = Field(default=False, description="Treat pattern as a Python regex.")
    case_sensitive: bool = Field(default=False)
    glob: str | None = Field(default=None, description="Only files whose name matches, e.g. *.py")
    include_hidden: bool = Field(default=False, description="Search hidden files and dirs.")
    max_matches: int | None = Field(default=None, ge=1)


class KeywordSearchTool(TypedTool[KeywordSearchArgs]):
    def __init__(self, settings: KeywordSearchSettings, files: FileToolsSettings) -> None:
        self._settings = settings
        self._files = files
        super().__init__(
            KeywordSearchArgs,
            make_definition(
                "keyword_search",
                "Search text files in the workspace for a literal string or regex; returns "
                "'path:line: text' lines.",
                KeywordSearchArgs,
                timeout_seconds=settings.timeout_seconds,
            ),
        )

    async def run(self, args: KeywordSearchArgs, session: SessionRef) -> ToolOutput:
        roots = WorkspaceRoots.for_session(session, self._files.extra_roots)
        try:
            base = roots.resolve(args.path)
        except PathOutsideRootsError as e:
            return ToolOutput.error(str(e))
        flags = 0 if args.case_sensitive else re.IGNORECASE
        source = args.pattern if args.regex else re.escape(args.pattern)
        try:
            compiled = re.compile(source, flags)
        except re.error as e:
            return ToolOutput.error(f"invalid regex {args.pattern!r}: {e}")
        if not base.exists():
            return ToolOutput.error(f"{args.path}: no such file or directory")
        limit = min(args.max_matches or self._settings.max_matches, self._settings.max_matches)
        return await asyncio.to_thread(self._scan, roots, base, compiled, args, limit)

    def _files_under(
        self, roots: WorkspaceRoots, base: Path, args: KeywordSearchArgs
    ) -> Iterator[Path]:
        if base.is_file():
            yield base
            return
        for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
            if not args.include_hidden:
                dirnames[:] = [d for d in dirnames if not d.startswith(".")]
            dirnames.sort()
            for name in sorted(filenames):
                if not args.include_hidden and name.startswith("."):
                    continue
                if args.glob is not None and not fnmatch.fnmatch(name, args.glob):
                    continue
                path = Path(dirpath) / name
                if path.is_symlink() and not roots.contains(path.resolve()):
                    continue
                yield path

    def _scan(
        self,
        roots: WorkspaceRoots,
        base: Path,
        compiled: re.Pattern[str],
        args: KeywordSearchArgs,
        limit: int,
    ) -> ToolOutput:
        matches: list[str] = []
        scanned = skipped = 0
        hit_limit = False
        for path in self._files_under(roots, base, args):
            if scanned >= self._settings.max_files:
                hit_limit = True
                break
            scanned += 1
            try:
                if path.stat().st_size > self._settings.max_file_bytes:
                    skipped += 1
                    continue
                data = path.read_bytes()
            except OSError:
                skipped += 1
                continue
            if is_binary(data[:BINARY_SNIFF_BYTES]):
                continue
            shown = roots.display(path.resolve())
            for number, line in enumerate(data.decode("utf-8", "replace").splitlines(), 1):
                if compiled.search(line):
                    text = line if len(line) <= MAX_LINE_CHARS else line[:MAX_LINE_CHARS] + "..."
                    matches.append(f"{shown}:{number}: {text}")
                    if len(matches) >= limit:
                        hit_limit = True
                        break
            if len(matches) >= limit:
                break
        if not matches:
            return ToolOutput.ok(f"no matches for {args.pattern!r} ({scanned} files searched)")
        footer: list[str] = []
        if hit_limit:
            footer.append(
                f"[... stopped at the limit: {limit} matches / "
                f"{self._settings.max_files} files ...]"
            )
        if skipped:
            footer.append(f"[{skipped} files skipped: too large or unreadable]")
        return ToolOutput.ok("\n".join(matches + footer))
