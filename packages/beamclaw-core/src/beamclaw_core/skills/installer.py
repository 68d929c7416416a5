"""Installing what a skill needs: apt, brew, npm, pip or a download.

Commands run through an injectable :class:`CommandRunner` (default
:class:`SubprocessRunner`: own process group, timeout, capped output) and are built from
:class:`InstallerCommands`, so callers can use ``sudo``, another pip, or — in tests —
real commands that fail. Downloads use the tools package's SSRF-guarded fetch.

Invariant: :meth:`SkillInstaller.install` never raises for a failed install; every
attempt is reported with the command, its exit status and its output.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from beamclaw_core.skills.eligibility import current_os
from beamclaw_core.skills.model import InstallSpec, Skill
from beamclaw_obs import beamclaw_home
from beamclaw_tools import (
    FetchError,
    NetworkPolicy,
    UnsafeAddressError,
    child_environment,
    guarded_fetch,
    run_process,
)

DEFAULT_TIMEOUT_SECONDS = 600.0
MAX_OUTPUT_CHARS = 20_000
MAX_DOWNLOAD_BYTES = 200 * 1024 * 1024


@dataclass(frozen=True)
class CommandOutcome:
    """How a command ended: exit status (None when killed at the timeout) and output."""

    exit_status: int | None
    output: str
    timed_out: bool = False


class CommandRunner(Protocol):
    """Runs one install command."""

    async def run(self, argv: Sequence[str], *, timeout_seconds: float) -> CommandOutcome: ...


class SubprocessRunner:
    """Runs commands as child processes (see ``beamclaw_tools.run_process``)."""

    def __init__(self, cwd: Path | None = None) -> None:
        self._cwd = cwd

    async def run(self, argv: Sequence[str], *, timeout_seconds: float) -> CommandOutcome:
        cwd = self._cwd or Path.cwd()
        try:
            result = await run_process(
                argv,
                cwd=cwd,
                env=child_environment(),
                timeout_seconds=timeout_seconds,
                max_output_chars=MAX_OUTPUT_CHARS,
            )
        except FileNotFoundError:
            return CommandOutcome(127, f"command not found: {argv[0]}")
        except PermissionError as e:
            return CommandOutcome(126, f"cannot run {argv[0]}: {e.strerror}")
        return CommandOutcome(result.exit_status, result.output, result.timed_out)


@dataclass(frozen=True)
class InstallerCommands:
    """Command prefixes per package manager; the package name is appended."""

    apt: tuple[str, ...] = ("apt-get", "install", "-y")
    brew: tuple[str, ...] = ("brew", "install")
    npm: tuple[str, ...] = ("npm", "install", "-g")
    pip: tuple[str, ...] = field(default_factory=lambda: (sys.executable, "-m", "pip", "install"))

    def argv(self, spec: InstallSpec) -> tuple[str, ...]:
        prefix: tuple[str, ...] = getattr(self, spec.kind)
        return (*prefix, spec.package or "")


@dataclass(frozen=True)
class InstallAttempt:
    """One install spec tried (or skipped) and its outcome."""

    spec: InstallSpec
    ok: bool
    command: tuple[str, ...] = ()
    exit_status: int | None = None
    output: str = ""
    skipped: str | None = None
    """Why the spec was not tried (wrong OS, package manager missing)."""
    timed_out: bool = False

    def describe(self) -> str:
        label = self.spec.describe()
        if self.skipped is not None:
            return f"{label}: skipped ({self.skipped})"
        if self.ok:
            return f"{label}: installed"
        if self.exit_status is not None:
            status = f"exit status {self.exit_status}"
        else:
            status = "timed out" if self.timed_out else "error"
        shown = " ".join(self.command) if self.command else label
        output = self.output.strip() or "(no output)"
        return f"{label}: failed ({status}) running `{shown}`\n{output}"


@dataclass(frozen=True)
class InstallReport:
    """Everything that happened while installing one skill's requirements."""

    skill: str
    attempts: tuple[InstallAttempt, ...]
    message: str | None = None

    @property
    def ok(self) -> bool:
        return any(a.ok for a in self.attempts)

    def describe(self) -> str:
        head = f"skill {self.skill}: " + ("installed" if self.ok else "not installed")
        lines = [head]
        if self.message:
            lines.append(self.message)
        lines.extend(a.describe() for a in self.attempts)
        return "\n".join(lines)


class SkillInstaller:
    """Runs a skill's install specs until one succeeds."""

    def __init__(
        self,
        runner: CommandRunner | None = None,
        *,
        commands: InstallerCommands | None = None,
        which: Callable[[str], str | None] = shutil.which,
        download_dir: Path | None = None,
        network: NetworkPolicy | None = None,
        timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS,
        os_name: str | None = None,
    ) -> None:
        self._runner = runner or SubprocessRunner()
        self._commands = commands or InstallerCommands()
        self._which = which
        self._download_dir = download_dir
        self._network = network or NetworkPolicy()
        self._timeout = timeout_seconds
        self._os = os_name or current_os()

    def downloads_for(self, skill: Skill) -> Path:
        """Where ``download`` specs of ``skill`` are saved."""
        return (self._download_dir or beamclaw_home() / "tools") / skill.name

    async def install(self, skill: Skill, spec_key: str | None = None) -> InstallReport:
        """Try the skill's specs in order (or only ``spec_key``) until one succeeds."""
        specs = skill.metadata.install
        if spec_key is not None:
            specs = tuple(s for s in specs if s.key == spec_key)
            if not specs:
                keys = ", ".join(s.key for s in skill.metadata.install) or "none"
                return InstallReport(skill.name, (), f"no install spec {spec_key!r} (have: {keys})")
        if not specs:
            return InstallReport(skill.name, (), "the skill declares no install specs")
        attempts: list[InstallAttempt] = []
        for spec in specs:
            attempt = await self._attempt(skill, spec)
            attempts.append(attempt)
            if attempt.ok:
                break
        return InstallReport(skill.name, tuple(attempts))

    async def _attempt(self, skill: Skill, spec: InstallSpec) -> InstallAttempt:
        if spec.os and self._os not in spec.os:
            return InstallAttempt(spec, False, skipped=f"for {', '.join(spec.os)}, not {self._os}")
        if spec.kind == "download":
            return await self._download(skill, spec)
        if not spec.package:
            return InstallAttempt(spec, False, skipped=f"{spec.kind} spec without a package")
        argv = self._commands.argv(spec)
        if self._which(argv[0]) is None and not os.path.isabs(argv[0]):
            return InstallAttempt(spec, False, argv, skipped=f"{argv[0]} is not installed")
        outcome = await self._runner.run(argv, timeout_seconds=self._timeout)
        return InstallAttempt(
            spec,
            outcome.exit_status == 0,
            argv,
            outcome.exit_status,
            outcome.output,
            timed_out=outcome.timed_out,
        )

    async def _download(self, skill: Skill, spec: InstallSpec) -> InstallAttempt:
        if not spec.url:
            return InstallAttempt(spec, False, skipped="download spec without a url")
        name = spec.filename or spec.url.rstrip("/").rsplit("/", 1)[-1].split("?")[0]
        if not name or name in (".", "..") or "/" in name or "\\" in name:
            return InstallAttempt(spec, False, skipped=f"cannot derive a file name from {spec.url}")
        command = ("download", spec.url)
        try:
            response = await guarded_fetch(
                "GET",
                spec.url,
                policy=self._network,
                max_bytes=MAX_DOWNLOAD_BYTES,
                timeout_seconds=self._timeout,
            )
        except (FetchError, UnsafeAddressError) as e:
            return InstallAttempt(spec, False, command, None, str(e))
        if response.status != 200:
            body = response.text()[:500]
            return InstallAttempt(
                spec, False, command, None, f"HTTP {response.status} {response.reason}\n{body}"
            )
        if response.truncated:
            return InstallAttempt(
                spec, False, command, None, f"larger than {MAX_DOWNLOAD_BYTES} bytes"
            )
        digest = hashlib.sha256(response.body).hexdigest()
        if spec.sha256 and digest != spec.sha256.lower():
            return InstallAttempt(
                spec, False, command, None, f"sha256 mismatch: expected {spec.sha256}, got {digest}"
            )
        target_dir = self.downloads_for(skill)
        target_dir.mkdir(parents=True, exist_ok=True)
        target = target_dir / name
        target.write_bytes(response.body)
        if spec.bins:
            target.chmod(0o755)
        return InstallAttempt(
            spec,
            True,
            command,
            None,
            f"saved {len(response.body)} bytes to {target} (sha256 {digest})",
        )
