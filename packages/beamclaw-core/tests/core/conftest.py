"""Core-level tests: a real SQLite store, the scripted provider and virtual time.

:class:`VirtualTime` is the clock *and* the sleep given to ``Core.create``: every timer
of the core (collect debounce, retry backoff, approval timeout, turn deadline,
maintenance interval) waits until the test advances time, so nothing here sleeps for
real and no assertion depends on wall-clock speed.
"""

from __future__ import annotations

import asyncio
import functools
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from beamclaw_core.api import Core
from beamclaw_core.loop import TurnEvent
from beamclaw_core.testing import EchoTool, VirtualTime
from beamclaw_core.testing import quiet_core_settings as make_settings

__all__ = ["EchoTool", "VirtualTime", "collect", "first", "make_settings", "until"]


async def collect(events: AsyncIterator[TurnEvent]) -> list[TurnEvent]:
    return [e async for e in events]


async def first(events: AsyncIterator[TurnEvent], kind: type) -> Any:
    async for event in events:
        if isinstance(event, kind):
            return event
    raise AssertionError(f"no {kind.__name__} before the stream ended")


async def until(predicate: Callable[[], Any]) -> None:
    """Wait for a condition no event announces (bounded by the test timeout)."""
    while not predicate():
        await asyncio.sleep(0.005)


@pytest.fixture
def make_core(core_factory: Callable[..., Core]) -> Callable[..., Core]:
    """Cores here run on virtual time unless a test passes ``virtual=False``."""
    return functools.partial(core_factory, virtual=True)
