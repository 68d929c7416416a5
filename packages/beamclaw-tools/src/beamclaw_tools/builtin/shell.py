"""``bash`` (a script run by bash) and ``terminal`` (one command, no shell).

Both require approval and ``supervised`` autonomy (seed 000 ADR-011, seed 001). The
working directory is the agent workspace unless ``[tools.<name>] cwd`` is set; a ``cwd``
argument must stay inside the file roots. See :mod:`beamclaw_tools.builtin.process` for
process-group and environment guarantees.
"""

from __future__ import annotations

import shlex
from pathlib import Path

from pydantic import Field

from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.builtin.process import ProcessResult, child_environment, run_process
from beamclaw_tools.errors import PathOutsideRootsError
from beamclaw_tools.paths import WorkspaceRoots
from beamclaw_tools.settings import FileToolsSettings, ShellSettings
from beamclaw_tools.types import Autonomy, SessionRef, ToolOutput

_GRACE_SECONDS = 10.0


class BashArgs(ToolArgs):
    command: str = Field(min_length=1, description="Bash script to run (bash -c).")
    timeout_seconds: float | None = Field(
        default=None, gt=0, description="Kill the command after this many seconds."
    )
    cwd: str | None = Field(
        default=None, description="Working directory, relative to the workspace."
    )


class TerminalArgs(ToolArgs):
    command: str = Field(
        min_length=1,
        description="One command line, split like a shell would (no pipes, no redirection).",
    )
    timeout_seconds: float | None = Field(default=None, gt=0)
    cwd: str | None = Field(default=None)


def _format(result: ProcessResult, timeout: float) -> ToolOutput:
    body = result.output.rstrip("\n")
    if result.timed_out:
        note = f"[timed out after {timeout:g} s; the process group was killed]"
        return ToolOutput.error(f"{body}\n{note}" if body else note)
    status = result.exit_status
    note = f"[exit status {status}]"
    text = f"{body}\n{note}" if body else note
    return ToolOutput(content=text, is_error=status != 0)


class _ShellBase:
    def __init__(self, settings: ShellSettings, files: FileToolsSettings) -> None:
        self._settings = settings
        self._files = files

    def _prepare(
        self, session: SessionRef, cwd_arg: str | None, timeout_arg: float | None
    ) -> tuple[Path, float] | ToolOutput:
        roots = WorkspaceRoots.for_session(session, self._files.extra_roots)
        if cwd_arg is not None:
            try:
                cwd = roots.resolve(cwd_arg)
            except PathOutsideRootsError as e:
                return ToolOutput.error(str(e))
            if not cwd.is_dir():
                return ToolOutput.error(f"cwd {cwd_arg!r} is not a directory")
        elif self._settings.cwd is not None:
            cwd = self._settings.cwd.expanduser()
        else:
            cwd = roots.primary
            cwd.mkdir(parents=True, exist_ok=True)
        timeout = min(
            timeout_arg or self._settings.timeout_seconds, self._settings.max_timeout_seconds
        )
        return cwd, timeout

    async def _run(self, argv: list[str], cwd: Path, timeout_seconds: float) -> ToolOutput:
        env = child_environment(self._settings.strip_env, self._settings.keep_env)
        try:
            result = await run_process(
                argv,
                cwd=cwd,
                env=env,
                timeout_seconds=timeout_seconds,
                max_output_chars=self._settings.max_output_chars,
            )
        except FileNotFoundError as e:
            return ToolOutput.error(f"command not found: {e.filename or argv[0]}")
        except PermissionError as e:
            return ToolOutput.error(f"cannot run {argv[0]}: {e.strerror}")
        return _format(result, timeout_seconds)


class BashTool(_ShellBase, TypedTool[BashArgs]):
    """``bash``: run a bash script in the workspace."""

    def __init__(self, settings: ShellSettings, files: FileToolsSettings) -> None:
        _ShellBase.__init__(self, settings, files)
        TypedTool.__init__(
            self,
            BashArgs,
            make_definition(
                "bash",
                "Run a bash script in the agent workspace. Returns combined stdout/stderr "
                "and the exit status. Long-running commands are killed at the timeout.",
                BashArgs,
                requires_approval=True,
                min_autonomy=Autonomy.SUPERVISED,
                timeout_seconds=settings.max_timeout_seconds + _GRACE_SECONDS,
            ),
        )

    async def run(self, args: BashArgs, session: SessionRef) -> ToolOutput:
        prepared = self._prepare(session, args.cwd, args.timeout_seconds)
        if isinstance(prepared, ToolOutput):
            return prepared
        cwd, timeout = prepared
        return await self._run([self._settings.shell, "-c", args.command], cwd, timeout)


class TerminalTool(_ShellBase, TypedTool[TerminalArgs]):
    """``terminal``: run one program with arguments, without a shell."""

    def __init__(self, settings: ShellSettings, files: FileToolsSettings) -> None:
        _ShellBase.__init__(self, settings, files)
        TypedTool.__init__(
            self,
            TerminalArgs,
            make_definition(
                "terminal",
                "Run one program with arguments (split like a shell, but no pipes, globbing "
                "or redirection) in the agent workspace. Returns output and exit status.",
                TerminalArgs,
                requires_approval=True,
                min_autonomy=Autonomy.SUPERVISED,
                timeout_seconds=settings.max_timeout_seconds + _GRACE_SECONDS,
            ),
        )

    async def run(self, args: TerminalArgs, session: SessionRef) -> ToolOutput:
        try:
            argv = shlex.split(args.command)
        except ValueError as e:
            return ToolOutput.error(f"cannot parse command: {e}")
        if not argv:
            return ToolOutput.error("the command is empty")
        prepared = self._prepare(session, args.cwd, args.timeout_seconds)
        if isinstance(prepared, ToolOutput):
            return prepared
        cwd, timeout = prepared
        return await self._run(argv, cwd, timeout)
