"""Secrets in configuration: ``{ env = "VAR" }``, ``{ file = "secrets/name" }`` or a literal.

A :class:`Secret` is resolved when used, never at load time: a missing variable or key
file is a :class:`MissingSecretError` saying what is wrong and how to fix it, raised by
:meth:`Secret.resolve`, never a crash at start. Resolved values are registered with the
scrubber, so they are redacted from every log line, event, tool result and LLM payload.
``repr``/``str``/serialisation never show them.

A key file (``beamclaw onboard`` writes them) is a path relative to ``$BEAMCLAW_HOME``
(or absolute); its content, stripped of surrounding whitespace, is the value. It is
refused while group or other users may read it (like ssh's private keys), so a key is
never used from a file that leaked its permissions. A file, unlike a variable, is not
inherited by child processes (MCP servers, tools).

A literal string is accepted (handy for local experiments) but is masked the same way.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, SecretStr, model_serializer, model_validator

from beamclaw_obs.errors import MissingSecretError
from beamclaw_obs.home import beamclaw_home
from beamclaw_obs.scrub import register_secret

ONBOARD_FIX = "run `beamclaw onboard` to store the key"


class Secret(BaseModel):
    """A secret given as ``{ env = "VAR" }``, ``{ file = "path" }`` or a literal string."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    env: str | None = None
    file: str | None = None
    literal: SecretStr | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_forms(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"literal": data}
        return data

    @model_validator(mode="after")
    def _exactly_one(self) -> Secret:
        given = [v for v in (self.env, self.file, self.literal) if v is not None]
        if len(given) != 1:
            raise ValueError(
                'a secret is exactly one of { env = "VAR_NAME" }, { file = "path" } or a string'
            )
        if self.env is not None and not self.env.strip():
            raise ValueError("env variable name is empty")
        if self.file is not None and not self.file.strip():
            raise ValueError("file path is empty")
        return self

    @classmethod
    def from_env(cls, variable: str) -> Secret:
        return cls(env=variable)

    def path(self) -> Path | None:
        """A key file's absolute path (relative ones under ``$BEAMCLAW_HOME``), else None."""
        if self.file is None:
            return None
        path = Path(self.file).expanduser()
        return path if path.is_absolute() else beamclaw_home() / path

    def _lookup(self, environ: Mapping[str, str] | None) -> tuple[str, MissingSecretError | None]:
        """The value, or the error saying why there is none (the value is then empty)."""
        if self.literal is not None:
            value = self.literal.get_secret_value()
            if value:
                return value, None
            return "", MissingSecretError("(literal)", problem="the literal secret is empty")
        path = self.path()
        if path is not None:
            return _read_key_file(path, self.describe())
        env = os.environ if environ is None else environ
        value = env.get(self.env or "", "")
        if value:
            return value, None
        return "", MissingSecretError(
            self.env or "",
            problem=f"environment variable {self.env} is not set",
            fix=f"export {self.env}=...",
        )

    def is_available(self, environ: Mapping[str, str] | None = None) -> bool:
        """True when :meth:`resolve` would succeed."""
        return self._lookup(environ)[1] is None

    def problem(self, environ: Mapping[str, str] | None = None) -> str | None:
        """Why :meth:`resolve` would fail (one line, never the value), or None."""
        error = self._lookup(environ)[1]
        return None if error is None else error.problem

    def fix(self) -> str:
        """What to do when the secret is missing: the export or the onboard command."""
        if self.env is not None:
            return f"export {self.env}=..."
        return ONBOARD_FIX

    def resolve(self, used_for: str | None = None, environ: Mapping[str, str] | None = None) -> str:
        """The secret's value. Raises :class:`MissingSecretError` when it cannot be had."""
        value, error = self._lookup(environ)
        if error is not None:
            raise MissingSecretError(error.variable, used_for, problem=error.problem, fix=error.fix)
        register_secret(value)
        return value

    def describe(self) -> str:
        """A safe description: ``env:VAR``, ``file:path`` or ``literal`` — never the value."""
        if self.env is not None:
            return f"env:{self.env}"
        if self.file is not None:
            return f"file:{self.file}"
        return "literal"

    @model_serializer
    def _serialize(self) -> dict[str, str] | str:
        if self.env is not None:
            return {"env": self.env}
        if self.file is not None:
            return {"file": self.file}
        return "********"

    def __repr__(self) -> str:
        return f"Secret({self.describe()})"

    __str__ = __repr__


_KEY_FILES: dict[Path, tuple[tuple[int, int, int, int], str]] = {}
"""Key file -> (its identity when read: inode, size, mtime, mode; its value). A key is
used on every LLM call and the gateway token on every request: a ``stat`` tells whether
the file changed, and only a changed file is read again."""


def _read_key_file(path: Path, described: str) -> tuple[str, MissingSecretError | None]:
    def missing(problem: str, fix: str = ONBOARD_FIX) -> tuple[str, MissingSecretError]:
        _KEY_FILES.pop(path, None)
        return "", MissingSecretError(described, problem=problem, fix=fix)

    try:
        info = path.stat()
        if os.name == "posix" and info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            return missing(
                f"key file {path} is readable by other users",
                f"chmod 600 {path} (or {ONBOARD_FIX} again)",
            )
        identity = (info.st_ino, info.st_size, info.st_mtime_ns, info.st_mode)
        known = _KEY_FILES.get(path)
        if known is not None and known[0] == identity:
            return known[1], None
        value = path.read_text(encoding="utf-8").strip()
    except FileNotFoundError:
        return missing(f"key file {path} does not exist")
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        return missing(f"key file {path} cannot be read: {reason or exc}")
    if not value:
        return missing(f"key file {path} is empty")
    _KEY_FILES[path] = (identity, value)
    return value, None
