"""Render a bench run as ``docs/benchmarks.md``: the goals first, then every measurement.

The goals are the performance targets the issues set (streaming, history, startup,
memory at rest and the browser snapshot cap); each names the area and measurement it is judged on. A goal whose area
did not run (or failed) is shown as not measured, never as met.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True)
class Goal:
    """``area.metric`` (optionally converted by ``derive``) compared with ``target``."""

    label: str
    area: str
    metric: str
    op: str  # "<=" or ">="
    target: float
    unit: str
    derive: Callable[[float], float] | None = None

    def value(self, results: Mapping[str, Any]) -> float | None:
        found = results.get(self.area, {}).get(self.metric)
        if not isinstance(found, int | float):
            return None
        return self.derive(float(found)) if self.derive else float(found)

    def met(self, value: float) -> bool:
        return value <= self.target if self.op == "<=" else value >= self.target


def _streaming_goals() -> list[Goal]:
    goals: list[Goal] = []
    names = {"sse": "/v1 SSE", "ws": "/ws", "tui": "TUI"}
    speeds = {"slow": "20 tok/s", "fast": "100 tok/s"}
    for case, speed in speeds.items():
        for path, name in names.items():
            goals.append(
                Goal(
                    f"added time to first token, {name}, {speed}",
                    "streaming",
                    f"{case}_{path}_added_ttft_p50_ms",
                    "<=",
                    10.0,
                    "ms",
                )
            )
            goals.append(
                Goal(
                    f"chunks forwarded / upstream chunks, {name}, {speed}",
                    "streaming",
                    f"{case}_{path}_chunk_ratio",
                    ">=",
                    0.9,
                    "",
                )
            )
    return goals


def _load_goals() -> list[Goal]:
    goals: list[Goal] = []
    for path, name in (("sse", "/v1 SSE"), ("ws", "/ws")):
        goals.append(
            Goal(
                f"dropped streams of 200 at once, {name}", "streams", f"{path}_dropped", "<=", 0, ""
            )
        )
        goals.append(
            Goal(
                f"streams stalled > 200 ms of 200, {name}",
                "streams",
                f"{path}_stalled",
                "<=",
                0,
                "",
            )
        )
    goals += [
        Goal("failed turns at 50 clients", "load", "c50_gateway_error_rate", "<=", 0, ""),
        Goal(
            "RSS per 1,000 sessions, lanes kept",
            "footprint",
            "rss_mb_per_1k_sessions",
            "<=",
            100,
            "MB",
        ),
        Goal(
            "RSS per 1,000 idle sessions, lanes left memory",
            "footprint",
            "rss_mb_per_1k_idle_sessions",
            "<=",
            5,
            "MB",
        ),
        Goal(
            "RSS per 1,000 open WebSockets",
            "footprint",
            "rss_mb_per_1k_websockets",
            "<=",
            100,
            "MB",
        ),
    ]
    return goals


GOALS: tuple[Goal, ...] = (
    *_streaming_goals(),
    *_load_goals(),
    Goal("added p50 at turns 900-1,000 / turns 20-120", "history", "late_vs_early", "<=", 1.2, "×"),
    Goal(
        "added CPU at turns 900-1,000 / a short session's at the same moments",
        "history",
        "added_cpu_late_vs_control",
        "<=",
        1.2,
        "×",
    ),
    Goal("added p50 per turn at turns 20-120", "history", "added_p50_early_ms", "<=", 2.0, "ms"),
    Goal("added p50 per turn at turns 900-1,000", "history", "added_p50_late_ms", "<=", 2.0, "ms"),
    Goal("`beamclaw --help`", "startup", "cli_help_seconds", "<=", 0.3, "s"),
    Goal("`beamclaw version`", "startup", "cli_version_seconds", "<=", 0.3, "s"),
    Goal("`beamclaw status`", "startup", "cli_status_seconds", "<=", 0.3, "s"),
    Goal("`beamclaw agent list`", "startup", "cli_agent_list_seconds", "<=", 0.3, "s"),
    Goal("`beamclaw serve` launch to ready", "startup", "serve_to_ready_seconds", "<=", 1.5, "s"),
    Goal(
        "`beamclaw serve` launch to its first API answer",
        "startup",
        "serve_to_first_api_seconds",
        "<=",
        1.5,
        "s",
    ),
    Goal("gateway RSS at rest", "startup", "serve_idle_rss_mb", "<=", 100.0, "MB"),
    Goal(
        "trimmed browser snapshot of the news fixture page",
        "browser_snapshot",
        "news_trimmed_chars",
        "<=",
        5000.0,
        "chars",
    ),
    Goal(
        "memory per 1,000 idle sessions (lanes kept)",
        "sessions",
        "control_kib_per_session_kept",
        "<=",
        5.0,
        "MB",
        derive=lambda kib: kib * 1000 / 1024,
    ),
)


LONG_LIST = 20
"""Lists longer than this (per-stream samples) are plotted, not printed."""


def _fmt(value: Any) -> str:
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list) and len(value) > LONG_LIST:  # pyright: ignore[reportUnknownArgumentType]
        return f"{len(value)} values (plotted)"  # pyright: ignore[reportUnknownArgumentType]
    if isinstance(value, list):
        return ", ".join(_fmt(v) for v in value)  # pyright: ignore[reportUnknownVariableType]
    return str(value)


def _commit() -> str:
    try:
        out = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        )
    except (OSError, subprocess.CalledProcessError):
        return "unknown"
    return out.stdout.strip()


def _machine() -> list[str]:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return [
        f"- run: {datetime.now(UTC):%Y-%m-%d %H:%M} UTC, commit `{_commit()}`",
        f"- machine: {platform.system()} {platform.machine()}, {os.cpu_count()} CPUs, "
        f"Python {sys.version.split()[0]}, load average (1 min) at the end {load:.2f}",
    ]


def render(
    results: Mapping[str, Any], figures: Sequence[tuple[str, str]] = (), figure_dir: str = "bench"
) -> str:
    """The Markdown page for ``results`` (area -> measurements, as ``bench`` writes them),
    embedding ``figures`` ((title, file name) under ``figure_dir``, relative to the page)
    after the goals."""
    lines = [
        "# Benchmarks",
        "",
        "Generated by `make bench` (`python -m bench --doc docs/benchmarks.md`); do not edit by",
        "hand. Every number is a median over several rounds, measured against a baseline taken",
        "in the same run (a direct call to the same fake upstream, or `python -c pass`), on",
        "loopback against the shipped fake OpenAI-compatible server, which streams token by",
        "token with a realistic gap. What each measurement means is documented in its",
        "`bench/<area>.py` module.",
        "",
        *_machine(),
        "",
        "## Goals",
        "",
        "| goal | measurement | target | measured | met |",
        "|---|---|---|---|---|",
    ]
    for goal in GOALS:
        value = goal.value(results)
        unit = f" {goal.unit}" if goal.unit else ""
        shown = "not measured" if value is None else f"{value:.3g}{unit}"
        verdict = "—" if value is None else ("yes" if goal.met(value) else "**no**")
        lines.append(
            f"| {goal.label} | `{goal.area}.{goal.metric}` | {goal.op} {goal.target:g}{unit} "
            f"| {shown} | {verdict} |"
        )
    if figures:
        lines += ["", "## Plots", ""]
        for title, name in figures:
            lines += [f"![{title}]({figure_dir}/{name})", ""]
        lines.pop()
    for area, measured in results.items():
        lines += ["", f"## {area}", "", "| measurement | value |", "|---|---|"]
        if not isinstance(measured, Mapping):
            lines.append(f"| result | {_fmt(measured)} |")
            continue
        for key, value in measured.items():  # pyright: ignore[reportUnknownVariableType]
            lines.append(f"| `{key}` | {_fmt(value)} |")
    return "\n".join(lines) + "\n"
