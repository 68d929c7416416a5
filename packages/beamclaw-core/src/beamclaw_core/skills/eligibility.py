"""Whether a skill can be offered on this machine: binaries, environment, OS.

The environment probes are parameters (``which``, ``environ``, ``os_name``) so callers
and tests decide what "this machine" is; the defaults look at the real one.
"""

from __future__ import annotations

import os
import platform
import shutil
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from beamclaw_core.skills.model import Skill, normalise_os

Which = Callable[[str], str | None]


def current_os() -> str:
    """This machine's OS as skills name it (``linux``, ``darwin``, ``windows`` …)."""
    return platform.system().lower()


@dataclass(frozen=True)
class Eligibility:
    """The verdict for one skill; ``reasons`` says what is missing."""

    skill: Skill
    missing_bins: tuple[str, ...] = ()
    missing_any_bins: tuple[str, ...] = ()
    missing_env: tuple[str, ...] = ()
    unsupported_os: str | None = None

    @property
    def eligible(self) -> bool:
        return not (
            self.missing_bins or self.missing_any_bins or self.missing_env or self.unsupported_os
        )

    @property
    def reasons(self) -> tuple[str, ...]:
        out: list[str] = []
        if self.unsupported_os:
            supported = ", ".join(self.skill.metadata.requires.os)
            out.append(f"runs on {supported}, not {self.unsupported_os}")
        if self.missing_bins:
            out.append("missing programs: " + ", ".join(self.missing_bins))
        if self.missing_any_bins:
            out.append("needs one of: " + ", ".join(self.missing_any_bins))
        if self.missing_env:
            out.append("missing environment variables: " + ", ".join(self.missing_env))
        return tuple(out)


def check_eligibility(
    skill: Skill,
    *,
    which: Which = shutil.which,
    environ: Mapping[str, str] | None = None,
    os_name: str | None = None,
) -> Eligibility:
    """Check ``requires`` against this machine (or the given probes)."""
    env = os.environ if environ is None else environ
    system = normalise_os(os_name) if os_name else current_os()
    req = skill.metadata.requires
    unsupported = system if req.os and system not in req.os else None
    missing_bins = tuple(b for b in req.bins if which(b) is None)
    missing_any = (
        req.any_bins if req.any_bins and all(which(b) is None for b in req.any_bins) else ()
    )
    missing_env = tuple(v for v in req.env if not env.get(v))
    return Eligibility(skill, missing_bins, missing_any, missing_env, unsupported)


def eligible_skills(
    skills: Iterable[Skill],
    *,
    which: Which = shutil.which,
    environ: Mapping[str, str] | None = None,
    os_name: str | None = None,
) -> tuple[list[Skill], list[Eligibility]]:
    """``(eligible skills, verdicts of the ineligible ones)``."""
    ok: list[Skill] = []
    refused: list[Eligibility] = []
    for skill in skills:
        verdict = check_eligibility(skill, which=which, environ=environ, os_name=os_name)
        if verdict.eligible:
            ok.append(skill)
        else:
            refused.append(verdict)
    return ok, refused
