"""``apply_patch``: apply a unified diff to files in the workspace, all or nothing.

Every hunk of every file is validated in memory first (paths through the workspace
rules, binary files refused, context must match); only then are files written. If the
operating system fails a write half-way, files already changed are restored from the
in-memory originals.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pydantic import Field

from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.builtin.files import read_text, write_atomic
from beamclaw_tools.builtin.patching import FilePatch, apply_file_patch, parse_patch
from beamclaw_tools.errors import FileToolError, PatchError, PathOutsideRootsError
from beamclaw_tools.paths import WorkspaceRoots
from beamclaw_tools.settings import FileToolsSettings
from beamclaw_tools.types import Autonomy, SessionRef, ToolOutput


class ApplyPatchArgs(ToolArgs):
    patch: str = Field(
        min_length=1,
        description="A unified diff ('--- a/file', '+++ b/file', '@@ … @@' hunks). Paths are "
        "relative to the workspace; /dev/null creates or deletes a file.",
    )


@dataclass(frozen=True)
class _Change:
    path: Path
    new_text: str | None  # None = delete
    original: str | None  # None = did not exist


class ApplyPatchTool(TypedTool[ApplyPatchArgs]):
    def __init__(self, settings: FileToolsSettings) -> None:
        self._files = settings
        super().__init__(
            ApplyPatchArgs,
            make_definition(
                "apply_patch",
                "Apply a unified diff to files in the workspace. All hunks are checked before "
                "anything is written: either every change applies or none does.",
                ApplyPatchArgs,
                requires_approval=True,
                min_autonomy=Autonomy.SUPERVISED,
                timeout_seconds=settings.timeout_seconds,
            ),
        )

    def _read(self, path: Path, shown: str) -> str:
        text, truncated = read_text(path, shown, self._files.max_write_bytes)
        if truncated:
            raise FileToolError(f"{shown} is larger than {self._files.max_write_bytes} bytes")
        return text

    def _plan(self, roots: WorkspaceRoots, fp: FilePatch) -> list[_Change]:
        if fp.source is None:
            assert fp.target is not None
            target = roots.resolve(fp.target)
            if target.exists():
                raise PatchError(fp.target, "the patch creates this file but it already exists")
            return [_Change(target, apply_file_patch("", fp), None)]
        source = roots.resolve(fp.source)
        original = self._read(source, fp.source)
        updated = apply_file_patch(original, fp)
        if fp.target is None:
            if updated:
                raise PatchError(fp.source, "the patch deletes this file but leaves content")
            return [_Change(source, None, original)]
        target = roots.resolve(fp.target)
        if target == source:
            return [_Change(source, updated, original)]
        if target.exists():
            raise PatchError(fp.target, "the patch renames onto an existing file")
        return [_Change(target, updated, None), _Change(source, None, original)]

    async def run(self, args: ApplyPatchArgs, session: SessionRef) -> ToolOutput:
        roots = WorkspaceRoots.for_session(session, self._files.extra_roots)
        changes: list[_Change] = []
        try:
            for fp in parse_patch(args.patch):
                changes.extend(self._plan(roots, fp))
        except (PatchError, PathOutsideRootsError, FileToolError) as e:
            return ToolOutput.error(f"patch not applied, nothing was changed: {e}")
        touched = [c.path for c in changes]
        if len(set(touched)) != len(touched):
            return ToolOutput.error(
                "patch not applied, nothing was changed: a file appears more than once"
            )
        done: list[_Change] = []
        change = changes[0]
        try:
            for change in changes:
                if change.new_text is None:
                    change.path.unlink()
                else:
                    change.path.parent.mkdir(parents=True, exist_ok=True)
                    write_atomic(change.path, change.new_text)
                done.append(change)
        except OSError as e:
            for change in reversed(done):
                if change.original is None:
                    change.path.unlink(missing_ok=True)
                else:
                    write_atomic(change.path, change.original)
            return ToolOutput.error(
                f"patch not applied ({change.path}: {e.strerror}); earlier changes were undone"
            )
        summary = []
        for change in changes:
            verb = (
                "deleted"
                if change.new_text is None
                else ("created" if change.original is None else "updated")
            )
            summary.append(f"{verb} {roots.display(change.path)}")
        return ToolOutput.ok("patch applied: " + ", ".join(summary))
