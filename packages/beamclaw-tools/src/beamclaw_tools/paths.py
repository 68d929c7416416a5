"""Workspace path rules: the one place that decides which paths a file tool may touch.

Rules (every file tool, and core's workspace code, go through :class:`WorkspaceRoots`):

* A path is resolved against the *primary* root (the agent workspace) when relative.
* Any ``..`` component is refused outright, even one that would stay inside.
* An absolute path is accepted only when it lies inside one of the roots.
* Symlinks are resolved before the check: a link (anywhere on the path, including a
  dangling final component) that points outside every root is refused.
* NUL bytes and empty paths are refused.

Invariant: :meth:`WorkspaceRoots.resolve` returns a fully resolved absolute path that is
inside at least one resolved root, or raises :class:`PathOutsideRootsError`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path, PurePath
from typing import TYPE_CHECKING

from beamclaw_obs import beamclaw_home
from beamclaw_tools.errors import InvalidAgentIdError, PathOutsideRootsError

if TYPE_CHECKING:  # annotations only: the pydantic types cost agent commands ~20 ms
    from beamclaw_tools.types import SessionRef

_AGENT_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
BINARY_SNIFF_BYTES = 8192


def validate_agent_id(agent_id: str) -> str:
    """Return ``agent_id`` when it can safely name a directory, else raise."""
    if not _AGENT_ID.match(agent_id) or ".." in agent_id:
        raise InvalidAgentIdError(agent_id)
    return agent_id


def agent_workspace(agent_id: str, home: Path | None = None) -> Path:
    """``$BEAMCLAW_HOME/agents/<agent_id>`` built from a validated id (not created)."""
    return (home or beamclaw_home()) / "agents" / validate_agent_id(agent_id)


def session_workspace(session: SessionRef) -> Path:
    """The session's workspace: ``SessionRef.workspace`` or the agent's default."""
    return session.workspace if session.workspace is not None else agent_workspace(session.agent_id)


@dataclass(frozen=True)
class WorkspaceRoots:
    """The directories a session's file tools are confined to (primary first)."""

    roots: tuple[Path, ...]

    def __post_init__(self) -> None:
        if not self.roots:
            raise ValueError("WorkspaceRoots needs at least one root")
        resolved = tuple(Path(r).expanduser().resolve() for r in self.roots)
        object.__setattr__(self, "roots", resolved)

    @classmethod
    def for_session(cls, session: SessionRef, extra_roots: Iterable[Path] = ()) -> WorkspaceRoots:
        """The agent workspace plus configured extra roots."""
        return cls((session_workspace(session), *extra_roots))

    @property
    def primary(self) -> Path:
        return self.roots[0]

    def contains(self, resolved: Path) -> bool:
        """True when an already-resolved path is inside (or equal to) some root."""
        return any(resolved == root or resolved.is_relative_to(root) for root in self.roots)

    def resolve(self, path: str) -> Path:
        """Resolve a tool argument to a safe absolute path (see module rules)."""
        if not path or not path.strip():
            raise PathOutsideRootsError(path, "the path is empty")
        if "\x00" in path:
            raise PathOutsideRootsError(path, "the path contains a NUL byte")
        pure = PurePath(Path(path).expanduser()) if path.startswith("~") else PurePath(path)
        if ".." in pure.parts:
            raise PathOutsideRootsError(path, "'..' components are not allowed")
        candidate = Path(pure) if pure.is_absolute() else self.primary / pure
        try:
            resolved = candidate.resolve(strict=False)
        except (OSError, RuntimeError) as e:
            raise PathOutsideRootsError(path, f"cannot resolve: {e}") from e
        if not self.contains(resolved):
            if pure.is_absolute() and not self.contains(Path(pure).parent.resolve()):
                reason = f"absolute path outside {self.describe()}"
            else:
                reason = f"resolves through a symlink to {resolved}, outside {self.describe()}"
            raise PathOutsideRootsError(path, reason)
        return resolved

    def display(self, resolved: Path) -> str:
        """A path relative to the primary root when inside it, else absolute."""
        if resolved.is_relative_to(self.primary):
            rel = resolved.relative_to(self.primary)
            return "." if rel == Path() else rel.as_posix()
        return str(resolved)

    def describe(self) -> str:
        return "the allowed roots (" + ", ".join(str(r) for r in self.roots) + ")"


def is_binary(sample: bytes) -> bool:
    """Heuristic used by every file tool: a NUL byte or undecodable UTF-8 means binary."""
    if b"\x00" in sample:
        return True
    try:
        sample.decode("utf-8")
    except UnicodeDecodeError as e:
        # A multi-byte character cut at the end of the sample is not binary.
        return e.start < len(sample) - 3
    return False
