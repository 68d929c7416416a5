"""PNG plots of a bench run (matplotlib, headless Agg), embedded in ``docs/benchmarks.md``.

Each figure is drawn only when the areas it reads ran (and did not fail):

* ``latency.png``: latency p50 (solid) and p99 (dashed) against concurrent clients, one
  colour per gateway: every gateway of ``peers`` when it ran (one run, one upstream),
  else BeamClaw and the direct upstream of ``load``;
* ``memory.png``: gateway RSS against idle sessions and against open WebSockets
  (``footprint``), with each peer's RSS at ready and after 1,000 sessions (``peers``);
* ``ttft.png``: the distribution (empirical CDF) of time to first token of every stream
  of the last ``streams`` round, direct, ``/v1`` SSE and ``/ws``;
* ``history.png``: added latency against turn number of one session, per gateway
  (``peers``).

:func:`figures` says which apply (pure); :func:`draw` writes them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

Results = Mapping[str, Any]
CONCURRENCY = (1, 10, 50)


def _area(results: Results, name: str) -> Mapping[str, Any] | None:
    area = results.get(name)
    if not isinstance(area, Mapping) or "error" in area:
        return None
    return area  # pyright: ignore[reportUnknownVariableType]


def _latency_lines(results: Results) -> dict[str, dict[str, list[float]]]:
    """Gateway -> {"p50": [...], "p99": [...]} over ``CONCURRENCY``."""
    lines: dict[str, dict[str, list[float]]] = {}
    peers = _area(results, "peers")
    if peers is not None and peers.get("gateways"):
        for gw in ["direct", *peers["gateways"]]:
            keys = {p: [f"{gw}_c{c}_{p}_ms" for c in CONCURRENCY] for p in ("p50", "p99")}
            if all(k in peers for ks in keys.values() for k in ks):
                lines[gw] = {p: [float(peers[k]) for k in ks] for p, ks in keys.items()}
        return lines
    load = _area(results, "load")
    if load is not None:
        for side, label in (("direct", "direct"), ("gateway", "beamclaw")):
            keys = {p: [f"c{c}_{side}_{p}_ms" for c in CONCURRENCY] for p in ("p50", "p99")}
            if all(k in load for ks in keys.values() for k in ks):
                lines[label] = {p: [float(load[k]) for k in ks] for p, ks in keys.items()}
    return lines


def _history_lines(results: Results) -> dict[str, list[float]]:
    peers = _area(results, "peers")
    if peers is None:
        return {}
    return {
        gw: [float(v) for v in peers[f"series_{gw}_added_by_turn_ms"]]
        for gw in peers.get("gateways", [])
        if f"series_{gw}_added_by_turn_ms" in peers
    }


def _ttft_samples(results: Results) -> dict[str, list[float]]:
    streams = _area(results, "streams")
    if streams is None:
        return {}
    return {
        path: [float(v) for v in streams[f"samples_ttft_ms_{path}"]]
        for path in ("direct", "sse", "ws")
        if streams.get(f"samples_ttft_ms_{path}")
    }


def _memory(results: Results) -> bool:
    footprint = _area(results, "footprint")
    return footprint is not None and "series_rss_mb_by_sessions" in footprint


def _draw_latency(results: Results, ax: Any) -> None:
    for i, (gw, series) in enumerate(_latency_lines(results).items()):
        colour = f"C{i}"
        ax.plot(CONCURRENCY, series["p50"], "-o", color=colour, label=f"{gw} p50")
        ax.plot(CONCURRENCY, series["p99"], "--o", color=colour, label=f"{gw} p99")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xticks(CONCURRENCY, [str(c) for c in CONCURRENCY])
    ax.set_xlabel("concurrent clients")
    ax.set_ylabel("latency per turn (ms)")
    ax.set_title("Latency against concurrency (fake upstream answers in 20 ms)")


def _draw_memory(results: Results, ax: Any) -> None:
    fp = results["footprint"]
    per = int(fp["per"])
    sessions = list(fp["series_sessions"])
    ax.plot(sessions, fp["series_rss_mb_by_sessions"], "-o", label="beamclaw: idle sessions")
    ws = [per * i for i in range(len(fp["series_rss_mb_by_websockets"]))]
    ax.plot(ws, fp["series_rss_mb_by_websockets"], "-s", label="beamclaw: open WebSockets")
    peers = _area(results, "peers") or {}
    for gw in peers.get("gateways", []):
        ready, after = peers.get(f"{gw}_rss_mb_ready"), peers.get(f"{gw}_rss_mb_after_1k_sessions")
        if isinstance(ready, int | float) and isinstance(after, int | float):
            ax.plot([0, int(peers["sessions"])], [ready, after], ":^", label=f"{gw} (peers run)")
    ax.set_xlabel("sessions / WebSockets added (the WebSocket line starts after the sessions)")
    ax.set_ylabel("gateway RSS (MB)")
    ax.set_title("Memory against idle sessions and open WebSockets")


def _draw_ttft(results: Results, ax: Any) -> None:
    for path, values in _ttft_samples(results).items():
        ordered = sorted(values)
        ys = [(i + 1) / len(ordered) for i in range(len(ordered))]
        ax.step(ordered, ys, where="post", label=path)
    streams = results["streams"]
    ax.set_xlabel("time to first token (ms)")
    ax.set_ylabel("fraction of streams")
    ax.set_title(f"Time to first token, {streams.get('streams', '?')} concurrent streams")


def _draw_history(results: Results, ax: Any) -> None:
    for gw, values in _history_lines(results).items():
        turns = [10 * (i + 1) for i in range(len(values))]
        ax.plot(turns, values, "-", label=gw)
    ax.set_xlabel("turn number of one session")
    ax.set_ylabel("added latency (ms, median per 10 turns)")
    ax.set_title("Added latency against history length")


FIGURES: dict[str, tuple[str, Callable[[Results], bool], Callable[[Results, Any], None]]] = {
    "latency.png": (
        "Latency percentiles against concurrency",
        lambda r: bool(_latency_lines(r)),
        _draw_latency,
    ),
    "memory.png": ("RSS against sessions and WebSockets", _memory, _draw_memory),
    "ttft.png": ("Time to first token", lambda r: bool(_ttft_samples(r)), _draw_ttft),
    "history.png": (
        "Added latency against turn number",
        lambda r: bool(_history_lines(r)),
        _draw_history,
    ),
}
"""File name -> (title, applies to these results?, draw on a matplotlib Axes)."""


def figures(results: Results) -> list[tuple[str, str]]:
    """(title, file name) of every figure these results can draw, in a stable order."""
    return [(title, name) for name, (title, applies, _) in FIGURES.items() if applies(results)]


def draw(results: Results, outdir: Path) -> list[tuple[str, str]]:
    """Write every applicable figure as ``outdir/<name>.png``; returns (title, name)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir.mkdir(parents=True, exist_ok=True)
    made = figures(results)
    for _, name in made:
        fig, ax = plt.subplots(figsize=(8, 4.5), dpi=100)
        FIGURES[name][2](results, ax)
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
        fig.tight_layout()
        fig.savefig(outdir / name)
        plt.close(fig)
    return made
