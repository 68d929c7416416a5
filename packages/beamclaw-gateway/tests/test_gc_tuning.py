"""The collector's settings while a gateway runs, and their undoing when it stops."""

from __future__ import annotations

import asyncio
import gc
from pathlib import Path

from beamclaw_gateway import GatewayRuntime
from beamclaw_gateway.gc_tuning import GcTuning, pause_for_startup, paused_for_startup

from .conftest import gateway_config


def test_apply_then_undo_leaves_the_collector_as_it_was() -> None:
    before = gc.get_threshold()
    tuning = GcTuning(threshold=12_345, freeze=True)
    tuning.apply()
    try:
        assert gc.get_threshold() == (12_345, *before[1:])
        assert gc.get_freeze_count() > 0  # what start-up built is out of the passes
        tuning.apply()  # once only: a second call must not record the tuned values
    finally:
        tuning.undo()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0
    tuning.undo()  # idempotent
    assert gc.get_threshold() == before


def test_a_start_up_paused_collector_runs_once_tuned_and_is_paused_again_after() -> None:
    pause_for_startup()
    try:
        assert not gc.isenabled()
        tuning = GcTuning(threshold=0, freeze=False)
        tuning.apply()
        assert gc.isenabled()  # the gateway runs with the collector on
        tuning.undo()
        assert not gc.isenabled()  # as the first tuning found it
    finally:
        gc.enable()


def test_zero_and_false_keep_the_interpreters_settings() -> None:
    before = gc.get_threshold()
    tuning = GcTuning(threshold=0, freeze=False)
    tuning.apply()
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    tuning.undo()
    assert gc.get_threshold() == before


def test_overlapping_tunings_restore_the_interpreters_settings_last() -> None:
    before = gc.get_threshold()
    first = GcTuning(threshold=11_111, freeze=True)
    second = GcTuning(threshold=22_222, freeze=True)
    first.apply()
    second.apply()
    first.undo()  # the first gateway stops while the second still runs
    assert gc.get_threshold()[0] == 22_222 and gc.get_freeze_count() > 0
    second.undo()
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


async def test_a_gateway_tunes_the_collector_while_it_runs(beamclaw_home: Path) -> None:
    before = gc.get_threshold()
    config = gateway_config(gc_threshold=20_000)
    runtime = GatewayRuntime(config, home=beamclaw_home)
    await runtime.start()
    try:
        assert gc.get_threshold()[0] == 20_000
        assert gc.get_freeze_count() > 0
    finally:
        await runtime.stop()
    assert gc.get_threshold() == before and gc.get_freeze_count() == 0


async def test_a_gateway_started_paused_tunes_the_collector_once_warm(
    beamclaw_home: Path,
) -> None:
    """``beamclaw serve`` pauses the collector: the pass before the freeze would walk all
    of start-up before ``/ready``, so the runtime tunes once it listens and has warmed."""
    before = gc.get_threshold()
    pause_for_startup()
    runtime = GatewayRuntime(gateway_config(gc_threshold=20_000), home=beamclaw_home)
    try:
        await runtime.start()
        assert paused_for_startup() and not gc.isenabled()
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0
        runtime.warm()  # what the server does once its listener is up
        async with asyncio.timeout(30):
            while paused_for_startup():
                await asyncio.sleep(0.01)
        assert gc.isenabled() and gc.get_threshold()[0] == 20_000
        assert gc.get_freeze_count() > 0
        await runtime.stop()
        assert gc.get_threshold() == before and gc.get_freeze_count() == 0
    finally:
        gc.enable()
