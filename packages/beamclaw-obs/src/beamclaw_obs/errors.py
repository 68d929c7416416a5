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
    """A ``{ env = "VAR" }`` secret was used but the variable is unset or empty."""

    def __init__(self, variable: str, used_for: str | None = None) -> None:
        self.variable = variable
        self.used_for = used_for
        where = f" (needed for {used_for})" if used_for else ""
        super().__init__(f"environment variable {variable} is not set{where}")


class HomeNotWritableError(BeamclawObsError):
    """``BEAMCLAW_HOME`` cannot be created or written."""

    def __init__(self, path: str, reason: str) -> None:
        self.path = path
        self.reason = reason
        super().__init__(f"BEAMCLAW_HOME {path} is not writable: {reason}")


class SupervisorError(BeamclawObsError):
    """A supervision tree was misused (duplicate child id, unknown child, stopped)."""
