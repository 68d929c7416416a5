"""``jq``: run a jq program (the ``jq`` PyPI binding) over JSON text or a workspace file.

Results are printed one JSON value per line (``raw_output`` prints strings bare). At most
``MAX_RESULTS`` results are produced, so a generator such as ``repeat(1)`` terminates.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

from pydantic import Field, model_validator

from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.builtin.files import read_text
from beamclaw_tools.errors import FileToolError, PathOutsideRootsError
from beamclaw_tools.paths import WorkspaceRoots
from beamclaw_tools.settings import FileToolsSettings, JqSettings
from beamclaw_tools.types import SessionRef, ToolOutput

MAX_RESULTS = 10_000


class JqArgs(ToolArgs):
    filter: str = Field(min_length=1, description="The jq program, e.g. '.items[] | .name'.")
    input: str | None = Field(default=None, description="JSON text to process.")
    path: str | None = Field(default=None, description="A JSON file in the workspace instead.")
    slurp: bool = Field(default=False, description="Read all input values into one array.")
    raw_output: bool = Field(default=False, description="Print strings without quotes.")

    @model_validator(mode="after")
    def _one_input(self) -> JqArgs:
        if (self.input is None) == (self.path is None):
            raise ValueError("give exactly one of 'input' (JSON text) or 'path' (a file)")
        return self


def _render(value: Any, raw: bool) -> str:
    if raw and isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False)


def _run_jq(program: str, text: str, slurp: bool, raw: bool) -> tuple[list[str], bool]:
    import jq  # at the first call: its compiled library stays out of a gateway at rest

    compiled = jq.compile(program)
    stream = compiled.input_text(text, slurp=slurp)
    out: list[str] = []
    for value in stream:
        if len(out) >= MAX_RESULTS:
            return out, True
        out.append(_render(value, raw))
    return out, False


class JqTool(TypedTool[JqArgs]):
    def __init__(self, settings: JqSettings, files: FileToolsSettings) -> None:
        self._settings = settings
        self._files = files
        super().__init__(
            JqArgs,
            make_definition(
                "jq",
                "Run a jq program over JSON given inline or read from a workspace file.",
                JqArgs,
                timeout_seconds=settings.timeout_seconds,
            ),
        )

    async def run(self, args: JqArgs, session: SessionRef) -> ToolOutput:
        if args.path is not None:
            roots = WorkspaceRoots.for_session(session, self._files.extra_roots)
            try:
                text, truncated = read_text(
                    roots.resolve(args.path), args.path, self._settings.max_input_bytes
                )
            except (PathOutsideRootsError, FileToolError) as e:
                return ToolOutput.error(str(e))
            if truncated:
                return ToolOutput.error(
                    f"{args.path} is larger than {self._settings.max_input_bytes} bytes"
                )
        else:
            text = args.input or ""
            if len(text.encode("utf-8")) > self._settings.max_input_bytes:
                limit = self._settings.max_input_bytes
                return ToolOutput.error(f"input is larger than {limit} bytes")
        try:
            lines, capped = await asyncio.to_thread(
                _run_jq, args.filter, text, args.slurp, args.raw_output
            )
        except ValueError as e:
            return ToolOutput.error(f"jq error: {e}")
        if capped:
            lines.append(f"[... stopped after {MAX_RESULTS} results ...]")
        return ToolOutput.ok("\n".join(lines) if lines else "(no output)")
