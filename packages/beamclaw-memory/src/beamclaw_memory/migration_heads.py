"""Migration heads without Alembic: the revision graph read from the version files' source.

:meth:`~beamclaw_memory.Database.migrate` runs at every start, and nearly always finds the
database at every head already. Importing Alembic and loading each revision module to
learn that costs a tenth of a second and ~10 MB, so this module answers the question with
:mod:`ast` and plain SQL, and Alembic is imported only when there is work to do.

Invariants:

* The files read are the ones Alembic's ``ScriptDirectory`` loads with this project's
  configuration: each location's own ``*.py`` files (not subdirectories, not
  ``__init__.py``, not editor lock files ``.#*``), each resolved path once, locations that
  do not exist skipped.
* A revision file is understood only when every binding of ``revision``,
  ``down_revision``, ``branch_labels`` and ``depends_on`` anywhere in it is a plain
  top-level assignment (``name = literal`` or ``name: T = literal``) of the shapes Alembic
  accepts: ``revision`` a string; the others ``None``, a string or a tuple/list of strings.
* :func:`parse_heads` returns the same set as ``ScriptDirectory.get_heads()``: revisions
  that no other revision names as its ``down_revision`` (``depends_on`` does not make a
  head, exactly as in Alembic), or ``None`` whenever the graph holds anything this module
  does not read with certainty (an unparsable file or binding, a missing or duplicated
  revision, a ``down_revision`` naming no revision of the set, a cycle, a character
  Alembic refuses in an id). ``None`` means "ask Alembic": nothing here ever raises for a
  strange version file, so its errors stay Alembic's.
* No version file is executed here. One that would fail to import is reported by Alembic
  the first time it has work to do, i.e. when the database is not at the heads read here.
* :func:`recorded_heads` reads ``alembic_version`` as Alembic's
  ``MigrationContext.get_current_heads`` does: no table is no revision.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from sqlalchemy import column, inspect, select, table
from sqlalchemy.engine import Connection

VERSION_TABLE = "alembic_version"
"""Alembic's default version table (BeamClaw never configures another)."""
_VERSIONS = select(column("version_num")).select_from(table(VERSION_TABLE))

_REVISION_FILE = re.compile(r"(?!\.\#|__init__)(.*\.py)$")
"""Alembic's ``_only_source_rev_file``: the file names a version location holds."""
_ILLEGAL_ID_CHARS = frozenset("@-+")
"""Characters Alembic refuses in a revision id."""
_NAMES = frozenset({"revision", "down_revision", "branch_labels", "depends_on"})


@dataclass(frozen=True, slots=True)
class RevisionFile:
    """What one version file declares."""

    revision: str
    down_revisions: tuple[str, ...]
    """The ``down_revision`` ids (empty for a base; several for a merge)."""
    branch_labels: tuple[str, ...]
    depends_on: tuple[str, ...]


def revision_files(locations: Iterable[str]) -> list[Path]:
    """The version files Alembic would load from ``locations``, in its order."""
    found: list[Path] = []
    seen: set[Path] = set()
    for location in locations:
        directory = Path(location)
        if not directory.is_dir():
            continue
        for name in sorted(p.name for p in directory.iterdir() if p.is_file()):
            if _REVISION_FILE.match(name) is None:
                continue
            path = (directory / name).resolve()
            if path not in seen:
                seen.add(path)
                found.append(path)
    return found


def _strings(value: object, name: str) -> tuple[str, ...]:
    """Alembic's ``util.to_tuple`` of a declared value: None, a string or strings."""
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, tuple | list):
        items = cast("tuple[object, ...] | list[object]", value)
        strings = tuple(item for item in items if isinstance(item, str))
        if len(strings) == len(items):
            return strings
    raise ValueError(f"{name} is not None, a string or strings")


def _plain_assignment(stmt: ast.stmt) -> tuple[ast.Name, ast.expr] | None:
    """``(target, value)`` of ``name = value`` / ``name: T = value`` for one of the names."""
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1:
        target, value = stmt.targets[0], stmt.value
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None:
        target, value = stmt.target, stmt.value
    else:
        return None
    if isinstance(target, ast.Name) and target.id in _NAMES:
        return target, value
    return None


def _bound_names(node: ast.AST) -> Iterable[str]:
    """Names ``node`` binds (or deletes, or declares global) in any scope."""
    if isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
        yield node.id
    elif isinstance(node, ast.alias):
        yield (node.asname or node.name).split(".")[0]
    elif isinstance(node, ast.Global | ast.Nonlocal):
        yield from node.names
    elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        yield node.name
    elif isinstance(node, ast.arg):
        yield node.arg
    elif isinstance(node, ast.ExceptHandler | ast.MatchAs | ast.MatchStar) and node.name:
        yield node.name


def read_revision_file(source: bytes) -> RevisionFile:
    """The declarations of one version file. Raises ``ValueError`` when it is not a plain
    module of literal declarations (see the module invariants)."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError) as exc:
        raise ValueError(f"not parsable: {exc}") from exc
    assignments = [a for a in map(_plain_assignment, tree.body) if a is not None]
    targets = {id(target) for target, _ in assignments}
    for node in ast.walk(tree):
        for name in _bound_names(node):
            if name in _NAMES and id(node) not in targets:
                raise ValueError(f"{name} is bound by a {type(node).__name__}, not assigned")
    declared: dict[str, object] = {}
    for target, value in assignments:  # in order: the last assignment wins, as at run time
        try:
            declared[target.id] = ast.literal_eval(value)
        except (ValueError, TypeError, SyntaxError, RecursionError) as exc:
            raise ValueError(f"{target.id} is not a literal") from exc
    revision = declared.get("revision")
    if not isinstance(revision, str) or not revision:
        raise ValueError("no revision string")
    if _ILLEGAL_ID_CHARS & set(revision):
        raise ValueError(f"revision {revision!r} holds a character Alembic refuses")
    return RevisionFile(
        revision=revision,
        down_revisions=_strings(declared.get("down_revision"), "down_revision"),
        branch_labels=_strings(declared.get("branch_labels"), "branch_labels"),
        depends_on=_strings(declared.get("depends_on"), "depends_on"),
    )


def _reaches_a_base(revisions: dict[str, RevisionFile]) -> bool:
    """Every revision's ``down_revision`` chain ends at a base: no cycle."""
    done: set[str] = set()
    for start in revisions:
        path: set[str] = set()
        stack: list[tuple[str, bool]] = [(start, False)]
        while stack:
            rev, leaving = stack.pop()
            if leaving:
                path.discard(rev)
                done.add(rev)
                continue
            if rev in done:
                continue
            if rev in path:
                return False
            path.add(rev)
            stack.append((rev, True))
            stack.extend((down, False) for down in revisions[rev].down_revisions)
    return True


def parse_heads(locations: Iterable[str]) -> set[str] | None:
    """The head revisions of the version files in ``locations``, or ``None`` when Alembic
    must be asked (see the module invariants)."""
    revisions: dict[str, RevisionFile] = {}
    for path in revision_files(locations):
        try:
            declared = read_revision_file(path.read_bytes())
        except (OSError, ValueError):
            return None
        if declared.revision in revisions:
            return None
        revisions[declared.revision] = declared
    named_down: set[str] = set()
    for declared in revisions.values():
        for down in declared.down_revisions:
            if down not in revisions:
                return None
            named_down.add(down)
    if not _reaches_a_base(revisions):
        return None
    return set(revisions) - named_down


def recorded_heads(connection: Connection) -> set[str]:
    """The revisions ``alembic_version`` records (empty when there is no such table)."""
    if not inspect(connection).has_table(VERSION_TABLE):
        return set()
    return {str(row[0]) for row in connection.execute(_VERSIONS)}
