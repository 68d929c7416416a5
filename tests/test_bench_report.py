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


def _run_results() -> dict[str, object]:
    """A run of the plotted areas, shaped as ``python -m bench`` writes them."""
    load: dict[str, object] = {}
    for c in (1, 10, 50):
        for side, base in (("direct", 21.0), ("gateway", 25.0)):
            load[f"c{c}_{side}_p50_ms"] = base * c**0.5
            load[f"c{c}_{side}_p99_ms"] = base * c**0.5 * 1.5
    peers: dict[str, object] = {"gateways": ["beamclaw", "litellm"], "sessions": 1000}
    for gw in ("direct", "beamclaw", "litellm"):
        for c in (1, 10, 50):
            peers[f"{gw}_c{c}_p50_ms"] = 20.0 + c
            peers[f"{gw}_c{c}_p99_ms"] = 30.0 + c
    for gw in ("beamclaw", "litellm"):
        peers[f"series_{gw}_added_by_turn_ms"] = [3.0 + i / 10 for i in range(30)]
        peers[f"{gw}_rss_mb_ready"] = 110.0
        peers[f"{gw}_rss_mb_after_1k_sessions"] = 140.0
    return {
        "load": load,
        "peers": peers,
        "footprint": {
            "per": 1000,
            "series_sessions": [0, 1000, 2000],
            "series_rss_mb_by_sessions": [110.0, 140.0, 160.0],
            "series_rss_mb_by_websockets": [160.0, 190.0, 200.0],
        },
        "streams": {
            "streams": 200,
            "samples_ttft_ms_direct": [20.0 + i / 10 for i in range(200)],
            "samples_ttft_ms_sse": [30.0 + i / 5 for i in range(200)],
        },
    }


def test_plots_are_png_files_embedded_in_the_page(tmp_path: Path) -> None:
    from bench._plots import draw

    results = _run_results()
    made = draw(results, tmp_path / "bench")
    names = [name for _, name in made]
    assert names == ["latency.png", "memory.png", "ttft.png", "history.png"]
    for name in names:
        assert (tmp_path / "bench" / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    page = render(results, made, "bench")
    assert "![Latency percentiles against concurrency](bench/latency.png)" in page
    assert page.index("## Plots") < page.index("## load")
    assert "| `samples_ttft_ms_sse` | 200 values (plotted) |" in page


def test_a_failed_or_missing_area_draws_no_plot(tmp_path: Path) -> None:
    from bench._plots import draw, figures

    results = _run_results()
    results["streams"] = {"error": "RuntimeError: no gateway"}
    del results["peers"]
    assert [name for _, name in figures(results)] == ["latency.png", "memory.png"]
    assert draw({}, tmp_path) == []
    assert "## Plots" not in render({})


def test_the_latency_plot_prefers_the_peers_run_and_falls_back_to_load() -> None:
    from bench._plots import _latency_lines  # pyright: ignore[reportPrivateUsage]

    results = _run_results()
    assert list(_latency_lines(results)) == ["direct", "beamclaw", "litellm"]
    del results["peers"]
    lines = _latency_lines(results)
    assert list(lines) == ["direct", "beamclaw"]
    assert lines["beamclaw"]["p50"][0] == 25.0


def test_every_area_make_bench_runs_has_a_run_function() -> None:
    """A helper module named like an area (not ``_private``) fails ``make bench``."""
    import importlib

    from bench.__main__ import discover

    missing = [
        name
        for name in discover()
        if not callable(getattr(importlib.import_module(f"bench.{name}"), "run", None))
    ]
    assert missing == []
