"""Whether a skill can be offered on this machine: binaries, environment, OS.

The environment probes are parameters (``which``, ``environ``, ``os_name``) so callers
and tests decide what "this machine" is; the defaults look at the real one.

:class:`EligibilityCache` answers :func:`eligible_skills` for the system prompt of every
turn without probing PATH each time: a verdict is reused while PATH and every required
environment variable keep their values (compared exactly, on every call) and for at
most ``recheck_seconds`` (1 s) after programs were last looked up — a program installed
into, or removed from, a directory already on PATH is seen within that bound.
"""

from __future__ import annotations

import os
import platform
import shutil
import time
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


RECHECK_SECONDS = 1.0
"""How long :class:`EligibilityCache` trusts a lookup of programs on PATH."""


@dataclass(frozen=True, slots=True)
class _Verdict:
    skills: tuple[Skill, ...]
    """The skill set judged (kept so its id is not reused while the entry lives)."""
    env_names: tuple[str, ...]
    inputs: tuple[str | None, ...]
    """PATH, then the values of ``env_names``, when judged."""
    checked_at: float
    eligible: tuple[Skill, ...]


class EligibilityCache:
    """:func:`eligible_skills` of a skill set, re-checked only when something it depends
    on may have changed.

    The verdict is reused while (a) the value of PATH and of every environment variable
    the skills require is unchanged — compared on every call, so setting a key or
    changing PATH counts at the next call — and (b) less than ``recheck_seconds`` have
    passed on ``clock`` since the programs were looked up, so a program appearing in or
    vanishing from a directory already on PATH is noticed within ``recheck_seconds``.
    The OS never changes under a process. Skill sets are told apart by identity (pass
    the same tuple for the same skills, as the skills catalogue does); an unchanged
    verdict is returned as the same tuple object. Thread-safe: entries are immutable.
    """

    MAX_SETS = 64

    def __init__(
        self,
        recheck_seconds: float = RECHECK_SECONDS,
        *,
        clock: Callable[[], float] = time.monotonic,
        which: Which = shutil.which,
        environ: Mapping[str, str] | None = None,
        os_name: str | None = None,
    ) -> None:
        self.recheck_seconds = recheck_seconds
        self.clock = clock
        """Seconds, monotonic (tests advance a fake one)."""
        self._which = which
        self._environ = environ
        self._os = normalise_os(os_name) if os_name else current_os()
        self._verdicts: dict[int, _Verdict] = {}

    def eligible(self, skills: tuple[Skill, ...]) -> tuple[Skill, ...]:
        """The eligible ones of ``skills``, in their order."""
        env = os.environ if self._environ is None else self._environ
        previous = self._verdicts.get(id(skills))
        if previous is not None and previous.skills is skills:
            now = self.clock()
            inputs = (env.get("PATH"), *(env.get(n) for n in previous.env_names))
            if inputs == previous.inputs and now - previous.checked_at < self.recheck_seconds:
                return previous.eligible
        names = tuple(sorted({v for s in skills for v in s.metadata.requires.env}))
        now = self.clock()  # read before the lookups: the bound errs on the early side
        inputs = (env.get("PATH"), *(env.get(n) for n in names))
        ok, _refused = eligible_skills(
            skills, which=self._which, environ=self._environ, os_name=self._os
        )
        eligible = tuple(ok)
        if (
            previous is not None
            and previous.skills is skills
            and _same(eligible, previous.eligible)
        ):
            eligible = previous.eligible
        if len(self._verdicts) >= self.MAX_SETS:
            self._verdicts.clear()
        self._verdicts[id(skills)] = _Verdict(skills, names, inputs, now, eligible)
        return eligible


def _same(a: tuple[Skill, ...], b: tuple[Skill, ...]) -> bool:
    return len(a) == len(b) and all(x is y for x, y in zip(a, b, strict=True))
