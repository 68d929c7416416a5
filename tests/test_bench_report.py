"""The bench report (``make bench`` -> docs/benchmarks.md) judges goals honestly."""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench._report import render  # noqa: E402


def _row(page: str, metric: str) -> str:
    return next(line for line in page.splitlines() if f"`{metric}`" in line and "|" in line)


def test_a_goal_missed_is_marked_and_an_area_not_run_is_not_measured() -> None:
    page = render({"history": {"late_vs_early": 1.5, "added_p50_early_ms": 1.2}})
    assert _row(page, "history.late_vs_early").endswith("| 1.5 × | **no** |")
    assert _row(page, "history.added_p50_early_ms").endswith("| 1.2 ms | yes |")
    assert _row(page, "startup.serve_to_ready_seconds").endswith("| not measured | — |")


def test_a_failed_area_is_listed_and_its_goals_are_not_measured() -> None:
    page = render({"startup": {"error": "RuntimeError: not ready"}})
    assert "| `error` | RuntimeError: not ready |" in page
    assert _row(page, "startup.cli_status_seconds").endswith("| not measured | — |")


def test_derived_goal_converts_kib_per_session_to_mb_per_thousand() -> None:
    page = render({"sessions": {"control_kib_per_session_kept": 10.24}})
    assert _row(page, "sessions.control_kib_per_session_kept").endswith("| 10 MB | **no** |")
