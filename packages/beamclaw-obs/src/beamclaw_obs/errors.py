"""The beamclaw-obs error tree.

Every error raised by this package derives from :class:`BeamclawObsError`; each carries
structured fields so callers can render one clear line without a traceback.
"""

from __future__ import annotations


class BeamclawObsError(Exception):
    """Base of every error raised by beamclaw-obs."""


class ConfigError(BeamclawObsError):
    """The configuration could not be loaded or is invalid.

    Attributes:
        source: the file (or ``"environment"``/``"defaults"``) the bad value came from.
        problems: one ``"key.path: reason"`` string per problem.
    """

    def __init__(self, source: str, problems: list[str]) -> None:
        self.source = source
        self.problems = problems
        joined = "; ".join(problems)
        super().__init__(f"invalid configuration in {source}: {joined}")


class MissingSecretError(BeamclawObsError):
    """A secret was used but cannot be had: variable unset or empty, key file missing,
    empty or readable by other users.

    Attributes:
        variable: the variable name, or ``file:<path>`` for a key file.
        used_for: what needed it, if the caller said.
        problem: one line saying what is wrong (never the value).
        fix: one line saying what to do about it.
    """

    def __init__(
        self,
        variable: str,
        used_for: str | None = None,
        *,
        problem: str | None = None,
        fix: str | None = None,
    ) -> None:
        self.variable = variable
        self.used_for = used_for
        self.problem = problem or f"environment variable {variable} is not set"
        self.fix = fix or f"export {variable}=..."
        where = f" (needed for {used_for})" if used_for else ""
        super().__init__(f"{self.problem}{where}")


class HomeNotWritableError(BeamclawObsError):
    """``BEAMCLAW_HOME`` cannot be created or written."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"BEAMCLAW_HOME {path} is not writable: {reason}")


class SupervisorError(BeamclawObsError):
    """A supervision tree was misused (duplicate child id, unknown child, stopped)."""
