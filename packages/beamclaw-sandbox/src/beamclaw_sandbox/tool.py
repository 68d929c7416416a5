"""The ``exec`` tool: run a Python or bash script in the session's sandbox container.

It needs ``supervised`` autonomy and an approval like the host ``bash`` tool (the loop
enforces both from the :class:`~beamclaw_tools.ToolDef`). The result names the exit
status (or the timeout), then stdout and stderr, each capped with an explicit marker.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field, model_validator

from beamclaw_sandbox.errors import BeamclawSandboxError
from beamclaw_sandbox.runner import HOST_GRACE, Language, RunOutcome
from beamclaw_sandbox.service import BUILD_WAIT_SECONDS, Sandbox
from beamclaw_sandbox.skills import SkillError, load_skill, save_skill
from beamclaw_tools import Autonomy, SessionRef, ToolArgs, ToolOutput, TypedTool, make_definition

DESCRIPTION = (
    "Run a Python or bash script in an isolated sandbox container (no network, read-only "
    "system, writable /work kept for this session). Print what you need; stdout and "
    "stderr come back with the exit status. Give `script` (or `skill` to rerun a saved "
    "one); `save_as` saves a script that succeeded as a skill for later."
)
BRIDGE_HINT = (
    " Inside, your other tools are callable: `from beamclaw_bridge import call_tool, "
    "search_tools` (index in /tools/index.txt), so one script can gather and filter "
    "their results instead of many separate calls."
)


class ExecArgs(ToolArgs):
    script: str | None = Field(default=None, description="The script's source code.")
    language: Language = Field(default="python", description="python or bash.")
    timeout: float | None = Field(
        default=None, gt=0, description="Kill the script after this many seconds."
    )
    save_as: str | None = Field(
        default=None,
        description="Save the script as a sandbox skill of this name when it succeeds.",
    )
    description: str | None = Field(
        default=None, description="What the saved skill does (with save_as)."
    )
    skill: str | None = Field(default=None, description="Run a saved sandbox skill by name.")

    @model_validator(mode="after")
    def _one_source(self) -> ExecArgs:
        if (self.script is None) == (self.skill is None):
            raise ValueError("give exactly one of script or skill")
        if self.script is not None and not self.script.strip():
            raise ValueError("script is empty")
        return self


def format_outcome(outcome: RunOutcome, timeout: float) -> ToolOutput:
    """The model-readable result of a run (pure)."""
    if outcome.hung:
        head = f"[timed out after {timeout:g} s; the container did not stop and was removed]"
    elif outcome.timed_out:
        head = f"[timed out after {timeout:g} s; the script's processes were killed]"
    else:
        head = f"[exit status {outcome.exit_status}]"
    parts = [head]
    if outcome.stdout:
        parts.append(f"stdout:\n{outcome.stdout.rstrip(chr(10))}")
    if outcome.stderr:
        parts.append(f"stderr:\n{outcome.stderr.rstrip(chr(10))}")
    if not outcome.stdout and not outcome.stderr:
        parts.append("(no output)")
    structured: dict[str, Any] = {
        "exit_status": outcome.exit_status,
        "timed_out": outcome.timed_out,
        "stdout_bytes": outcome.stdout_bytes,
        "stderr_bytes": outcome.stderr_bytes,
        "seconds": round(outcome.seconds, 3),
    }
    failed = outcome.timed_out or outcome.exit_status != 0
    return ToolOutput(content="\n".join(parts), is_error=failed, structured=structured)


class ExecTool(TypedTool[ExecArgs]):
    """``exec`` over a :class:`Sandbox`."""

    def __init__(self, sandbox: Sandbox) -> None:
        s = sandbox.settings
        super().__init__(
            ExecArgs,
            make_definition(
                "exec",
                DESCRIPTION + (BRIDGE_HINT if sandbox.bridge is not None else ""),
                ExecArgs,
                requires_approval=True,
                min_autonomy=Autonomy.SUPERVISED,
                timeout_seconds=s.max_timeout_seconds + HOST_GRACE + BUILD_WAIT_SECONDS + 30,
                max_output_chars=2 * s.max_output_chars + 500,
                source="sandbox",
            ),
        )
        self._sandbox = sandbox

    async def run(self, args: ExecArgs, session: SessionRef) -> ToolOutput:
        s = self._sandbox.settings
        timeout = min(args.timeout or s.default_timeout_seconds, s.max_timeout_seconds)
        language: Language = args.language
        script = args.script
        if args.skill is not None:
            if session.workspace is None:
                return ToolOutput.error("this session has no agent workspace holding skills")
            try:
                language, script = load_skill(session.workspace, args.skill)
            except SkillError as e:
                return ToolOutput.error(str(e))
        assert script is not None
        if len(script.encode()) > s.max_script_bytes:
            return ToolOutput.error(f"the script exceeds {s.max_script_bytes} bytes")
        key = self._sandbox.scope_key(session.session_id, session.agent_id)
        try:
            outcome = await self._sandbox.run(key, script, language, timeout, session)
        except BeamclawSandboxError as e:
            return ToolOutput.error(str(e))
        output = format_outcome(outcome, timeout)
        if args.save_as is not None:
            output = self._save(output, args, language, script, session)
        return output

    @staticmethod
    def _save(
        output: ToolOutput, args: ExecArgs, language: Language, script: str, session: SessionRef
    ) -> ToolOutput:
        assert args.save_as is not None
        if output.is_error:
            note = f"[not saved as {args.save_as!r}: the script did not succeed]"
        elif session.workspace is None:
            note = "[not saved: this session has no agent workspace]"
        else:
            try:
                path = save_skill(
                    session.workspace, args.save_as, args.description or "", language, script
                )
            except (SkillError, OSError) as e:
                note = f"[not saved: {e}]"
            else:
                note = f"[saved as sandbox skill {args.save_as!r} at {path}]"
        return output.model_copy(update={"content": f"{output.content}\n{note}"})
