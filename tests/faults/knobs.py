"""The fault suite's knobs: short form by default (``make test``), long form from the
environment (``make faults``). Read once at import, before the per-test fixture clears
``BEAMCLAW_*`` variables from the environment."""

from __future__ import annotations

import os

ITERATIONS = int(os.environ.get("BEAMCLAW_FAULT_ITERATIONS", "2"))
"""kill -9 iterations per database (long form: 50)."""
SOAK_SECONDS = float(os.environ.get("BEAMCLAW_FAULT_SOAK_SECONDS", "30"))
"""Length of the constant-load soak (long form: 1800)."""
SEED = int(os.environ.get("BEAMCLAW_FAULT_SEED", "0")) or None
"""Seed of the kill points (0 = a fresh one, printed by the test)."""
