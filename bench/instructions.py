"""Instructions per gateway turn, counted by callgrind: a measure no other load moves.

Opt-in (``python -m bench instructions``, about five minutes; ``make bench`` leaves it
out): on a shared machine whose speed drifts, wall-clock and even CPU-time differences
of a few percent are lost in noise, while callgrind's instruction count for the same
code and inputs repeats closely. It runs ``bench/_instructions_driver.py`` (a gateway and
its client in one process, the fake OpenAI server in another, not counted) under
``valgrind --tool=callgrind`` and, after the driver's warm-up, zeroes the counters, has
it make ``REQUESTS`` direct requests to the fake server, dumps; zeroes again, has it run
``REQUESTS`` one-step non-streaming turns in fresh sessions, dumps. Every thread of the
process counts (client, gateway, core, database and obs workers) and each phase ends
once background work has settled, so a turn's deferred work is in its count.

Reported: instructions per direct request, per gateway turn, the difference, and the
ratio. Needs ``valgrind`` (Debian's package); without it the result says so.

Caveat: work batched by time runs in smaller batches under callgrind's ~50x slowdown. A
turn then takes longer than the transcript indexer's 0.1 s batch window, so every turn
is indexed in a batch of its own, where at full speed about sixteen share one; the
count includes about 1 M instructions per turn of indexing that real load spreads
thinner (measured by disabling the indexer).
"""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from bench.gateway import _SERVER

DEFAULT = False
"""Not part of ``python -m bench`` without arguments (see ``bench/__main__.py``)."""

REQUESTS = 40
_TOTALS = re.compile(r"^(?:totals|summary):\s*(\d+)", re.MULTILINE)


def _dumped_instructions(before: set[Path], out_dir: Path) -> int:
    """The instruction total of the one dump file written since ``before``."""
    new = sorted(set(out_dir.glob("callgrind.out*")) - before)
    if len(new) != 1:
        raise RuntimeError(f"expected one new callgrind dump, found {len(new)}")
    match = _TOTALS.search(new[0].read_text(errors="replace"))
    if match is None:
        raise RuntimeError(f"no totals in {new[0].name}")
    return int(match.group(1))


def _expect(proc: subprocess.Popen[str], word: str) -> None:
    assert proc.stdout is not None
    while True:
        line = proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the driver ended before {word}")
        if line.strip() == word:
            return


def _phase(proc: subprocess.Popen[str], out_dir: Path, command: str) -> int:
    assert proc.stdin is not None
    subprocess.run(["callgrind_control", "-z", str(proc.pid)], check=True, capture_output=True)
    proc.stdin.write(f"{command} {REQUESTS}\n")
    proc.stdin.flush()
    _expect(proc, "DONE")
    before = set(out_dir.glob("callgrind.out*"))
    subprocess.run(["callgrind_control", "-d", str(proc.pid)], check=True, capture_output=True)
    return _dumped_instructions(before, out_dir)


def run() -> dict[str, Any]:
    """Count; returns the measurements (prints nothing)."""
    if shutil.which("valgrind") is None or shutil.which("callgrind_control") is None:
        return {"skipped": "valgrind is not installed (apt-get install valgrind)"}
    server = subprocess.Popen(
        [sys.executable, "-c", _SERVER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert server.stdout is not None
        fake_url = server.stdout.readline().strip()
        with tempfile.TemporaryDirectory() as tmp:
            out_dir = Path(tmp)
            driver = subprocess.Popen(
                [
                    "valgrind",
                    "--tool=callgrind",
                    "--trace-children=no",
                    f"--callgrind-out-file={out_dir / 'callgrind.out'}",
                    sys.executable,
                    "-m",
                    "bench._instructions_driver",
                    fake_url,
                ],
                cwd=Path(__file__).resolve().parent.parent,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
            )
            try:
                _expect(driver, "READY")
                direct = _phase(driver, out_dir, "direct")
                gateway = _phase(driver, out_dir, "gateway")
                assert driver.stdin is not None
                driver.stdin.write("quit\n")
                driver.stdin.flush()
                driver.wait(timeout=600)
            finally:
                if driver.poll() is None:
                    driver.kill()
                    driver.wait()
    finally:
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=10)
    per_direct = direct / REQUESTS
    per_turn = gateway / REQUESTS
    return {
        "requests_per_phase": REQUESTS,
        "instructions_per_direct_request_m": round(per_direct / 1e6, 3),
        "instructions_per_gateway_turn_m": round(per_turn / 1e6, 3),
        "added_instructions_per_turn_m": round((per_turn - per_direct) / 1e6, 3),
        "gateway_vs_direct_instructions": round(per_turn / per_direct, 2),
    }
