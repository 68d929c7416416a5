"""Unified diffs as data, and applying them to text in memory.

Parsing uses ``unidiff``; application is ours and pure: :func:`apply_file_patch` returns
the new text or raises :class:`PatchError` naming the hunk that does not fit. A hunk is
placed where its header says when its old lines match there, otherwise at the nearest
position where they match exactly (like ``patch`` with zero fuzz).
"""

from __future__ import annotations

from dataclasses import dataclass

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from beamclaw_tools.errors import PatchError

DEV_NULL = "/dev/null"


@dataclass(frozen=True)
class Hunk:
    """One hunk: the old lines it expects and the new lines replacing them."""

    source_start: int
    old: tuple[str, ...]
    new: tuple[str, ...]


@dataclass(frozen=True)
class FilePatch:
    """Changes to one file. ``source``/``target`` are None for an added/removed file."""

    source: str | None
    target: str | None
    hunks: tuple[Hunk, ...]

    @property
    def display(self) -> str:
        return self.target or self.source or "?"


def _strip_prefix(name: str, prefix: str) -> str | None:
    if name == DEV_NULL:
        return None
    return name[len(prefix) :] if name.startswith(prefix) else name


def parse_patch(text: str) -> tuple[FilePatch, ...]:
    """Parse a unified diff (git ``a/``/``b/`` prefixes are removed)."""
    try:
        patch_set = PatchSet.from_string(text)
    except UnidiffParseError as e:
        raise PatchError("", f"malformed unified diff: {e}") from e
    if not patch_set:
        raise PatchError("", "no file changes found (expected '--- a/file', '+++ b/file', '@@')")
    files: list[FilePatch] = []
    for patched in patch_set:
        if patched.is_binary_file:
            raise PatchError(patched.path, "binary patches are not supported")
        git_style = patched.source_file.startswith("a/") or patched.target_file.startswith("b/")
        source = _strip_prefix(patched.source_file, "a/" if git_style else "")
        target = _strip_prefix(patched.target_file, "b/" if git_style else "")
        hunks: list[Hunk] = []
        for hunk in patched:
            old: list[str] = []
            new: list[str] = []
            last: list[list[str]] = []
            for line in hunk:
                kind = line.line_type
                if kind == "\\":
                    for side in last:
                        side[-1] = side[-1].removesuffix("\n")
                    continue
                if kind == " ":
                    old.append(line.value)
                    new.append(line.value)
                    last = [old, new]
                elif kind == "-":
                    old.append(line.value)
                    last = [old]
                elif kind == "+":
                    new.append(line.value)
                    last = [new]
            hunks.append(Hunk(hunk.source_start, tuple(old), tuple(new)))
        files.append(FilePatch(source, target, tuple(hunks)))
    return tuple(files)


def _matches_at(lines: list[str], old: tuple[str, ...], at: int) -> bool:
    return at >= 0 and at + len(old) <= len(lines) and tuple(lines[at : at + len(old)]) == old


def apply_file_patch(original: str, patch: FilePatch) -> str:
    """Apply every hunk of ``patch`` to ``original``; raise :class:`PatchError` if any fails."""
    lines = original.splitlines(keepends=True)
    result: list[str] = []
    cursor = 0
    for number, hunk in enumerate(patch.hunks, 1):
        expected = max(hunk.source_start - 1, 0) if hunk.old else hunk.source_start
        position: int | None = None
        if _matches_at(lines, hunk.old, expected) and expected >= cursor:
            position = expected
        else:
            candidates = [
                i
                for i in range(cursor, len(lines) - len(hunk.old) + 1)
                if _matches_at(lines, hunk.old, i)
            ]
            if candidates:
                position = min(candidates, key=lambda i: abs(i - expected))
        if position is None:
            first = hunk.old[0].rstrip("\n") if hunk.old else ""
            raise PatchError(
                patch.display,
                f"hunk {number} (at line {hunk.source_start}) does not match the file"
                + (f"; expected a line {first!r}" if first else ""),
            )
        result.extend(lines[cursor:position])
        result.extend(hunk.new)
        cursor = position + len(hunk.old)
    result.extend(lines[cursor:])
    return "".join(result)
