"""Skill values: frontmatter metadata, requirements, install specs (frozen models).

Operating systems use the names :func:`platform.system` reports, lower-cased: ``linux``,
``darwin``, ``windows`` (plus the BSDs). Aliases people write (``macos``, ``osx``,
``mac``, ``win32``, ``win``) are normalised when parsing; unknown names are errors.
"""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

KNOWN_OS = frozenset({"linux", "darwin", "windows", "freebsd", "openbsd", "netbsd"})
OS_ALIASES = {
    "macos": "darwin",
    "osx": "darwin",
    "mac": "darwin",
    "macosx": "darwin",
    "win32": "windows",
    "win": "windows",
    "win64": "windows",
    "linux2": "linux",
    "gnu/linux": "linux",
}
BASE_DIR_PLACEHOLDER = "{baseDir}"


def normalise_os(name: str) -> str:
    """The canonical OS name, or ValueError naming the accepted ones."""
    key = name.strip().lower()
    key = OS_ALIASES.get(key, key)
    if key not in KNOWN_OS:
        known = ", ".join(sorted(KNOWN_OS))
        raise ValueError(f"unknown operating system {name!r} (use one of: {known})")
    return key


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="ignore", populate_by_name=True)


class SkillSource(enum.StrEnum):
    """Where a skill was found; later sources override earlier ones."""

    BUNDLED = "bundled"
    GLOBAL = "global"
    AGENT = "agent"


class Requires(_Frozen):
    """``requires``: what must be present for the skill to be offered."""

    bins: tuple[str, ...] = ()
    """Every one of these executables must be on PATH."""
    any_bins: tuple[str, ...] = Field(default=(), alias="anyBins")
    """At least one of these executables must be on PATH (when given)."""
    env: tuple[str, ...] = ()
    """Every one of these environment variables must be set and non-empty."""
    os: tuple[str, ...] = ()
    """The skill works only on these operating systems (empty = any)."""

    @field_validator("os", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        if isinstance(value, str):
            value = [value]
        if isinstance(value, list | tuple):
            return tuple(normalise_os(str(v)) for v in value)  # pyright: ignore[reportUnknownVariableType]
        return value

    @field_validator("bins", "any_bins", "env", mode="before")
    @classmethod
    def _listify(cls, value: object) -> object:
        return [value] if isinstance(value, str) else value


InstallKind = Literal["apt", "brew", "npm", "pip", "download"]


class InstallSpec(_Frozen):
    """One way to install what a skill needs."""

    kind: InstallKind
    id: str | None = None
    """A name to pick this spec explicitly (default: the kind)."""
    package: str | None = Field(default=None, alias="formula")
    """Package (apt/npm/pip) or formula (brew)."""
    url: str | None = None
    """``download``: the file to fetch."""
    filename: str | None = None
    """``download``: name to save as (default: the URL's last path segment)."""
    sha256: str | None = None
    """``download``: expected SHA-256 of the file (hex); a mismatch fails the install."""
    bins: tuple[str, ...] = ()
    """Executables this spec provides (shown to the user)."""
    os: tuple[str, ...] = ()
    label: str | None = None

    @field_validator("os", mode="before")
    @classmethod
    def _normalise(cls, value: object) -> object:
        return Requires._normalise(value)  # pyright: ignore[reportPrivateUsage]

    @property
    def key(self) -> str:
        return self.id or self.kind

    def describe(self) -> str:
        if self.label:
            return self.label
        target = self.package or self.url or "?"
        return f"{self.kind} {target}"


class SkillMetadata(_Frozen):
    """``metadata``: presentation and policy of a skill."""

    emoji: str | None = None
    always: bool = False
    """Always include the full skill in the system prompt."""
    requires: Requires = Field(default_factory=Requires)
    install: tuple[InstallSpec, ...] = ()
    primary_env: str | None = Field(default=None, alias="primaryEnv")


class Skill(_Frozen):
    """A parsed SKILL.md."""

    name: str
    description: str
    body: str
    homepage: str | None = None
    metadata: SkillMetadata = Field(default_factory=SkillMetadata)
    path: Path | None = None
    """The SKILL.md file (None for skills parsed from text)."""
    source: SkillSource = SkillSource.BUNDLED

    @property
    def base_dir(self) -> Path | None:
        """The directory holding SKILL.md (``{baseDir}`` in the body)."""
        return self.path.parent if self.path is not None else None

    def content(self) -> str:
        """The body with ``{baseDir}`` replaced by the skill's directory."""
        if self.base_dir is None:
            return self.body
        return self.body.replace(BASE_DIR_PLACEHOLDER, str(self.base_dir))
