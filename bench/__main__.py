"""Run every benchmark module and print its results.

Each ``bench/<area>.py`` exposes ``run()`` (sync or async) returning a flat-ish dict of
measurements. Benchmarks report ratios against a baseline measured in the same run,
medians over several rounds, and peak memory; they never assert (tests do that).

Usage: ``python -m bench [--merge] [--doc PATH] [AREA ...]`` — results also go to
``bench/results/latest.json``: a full run (no ``AREA``) replaces it; a run of named areas
(or any run with ``--merge``) goes into it, its areas replacing theirs and the others
kept, so re-measuring one area (``python -m bench streams``) never drops the rest and
``make bench-peers`` adds ``peers`` to a full run; with
``--doc`` they are also rendered as Markdown (goals first, see :mod:`bench._report`) to
``PATH`` (``make bench`` writes ``docs/benchmarks.md``), with PNG plots
(:mod:`bench._plots`) in ``bench/`` beside it.
"""

from __future__ import annotations

import asyncio
import importlib
import inspect
import json
import pkgutil
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).parent


def discover() -> list[str]:
    """Every area that runs by default: not ``common``, not ``_private``, and not one
    whose module sets ``DEFAULT = False`` (opt-in: name it on the command line)."""
    return sorted(
        m.name
        for m in pkgutil.iter_modules([str(HERE)])
        if not m.name.startswith("_")
        and m.name != "common"
        and getattr(importlib.import_module(f"bench.{m.name}"), "DEFAULT", True)
    )


def run_area(name: str) -> dict[str, Any]:
    module = importlib.import_module(f"bench.{name}")
    fn = module.run
    started = time.perf_counter()
    result = asyncio.run(fn()) if inspect.iscoroutinefunction(fn) else fn()
    result = dict(result)
    result["_wall_seconds"] = round(time.perf_counter() - started, 2)
    return result


def _print(name: str, result: dict[str, Any]) -> None:
    print(f"\n== {name} ==")
    for key, value in result.items():
        if isinstance(value, float):
            value = f"{value:.4g}"
        print(f"  {key:<48} {value}")


USAGE = "usage: python -m bench [--merge] [--doc PATH] [AREA ...]"


def main(argv: list[str]) -> int:
    doc: Path | None = None
    merge = argv[:1] == ["--merge"]
    if merge:
        argv = argv[1:]
    if argv[:1] == ["--doc"]:
        if len(argv) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        doc, argv = Path(argv[1]), argv[2:]
    areas = argv or discover()
    merge = merge or bool(argv)
    out = HERE / "results"
    results: dict[str, Any] = {}
    if merge and (out / "latest.json").exists():
        results = json.loads((out / "latest.json").read_text())
    failed = False
    for area in areas:
        try:
            results[area] = run_area(area)
            _print(area, results[area])
        except Exception as exc:
            failed = True
            results[area] = {"error": f"{type(exc).__name__}: {exc}"}
            print(f"\n== {area} == FAILED: {exc}", file=sys.stderr)
    out.mkdir(exist_ok=True)
    (out / "latest.json").write_text(json.dumps(results, indent=2, default=str))
    print(f"\nresults written to {out / 'latest.json'}")
    if doc is not None:
        from bench._plots import draw
        from bench._report import render

        figures = draw(results, doc.parent / "bench")
        doc.write_text(render(results, figures, "bench"))
        print(f"report written to {doc}, {len(figures)} plots in {doc.parent / 'bench'}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
