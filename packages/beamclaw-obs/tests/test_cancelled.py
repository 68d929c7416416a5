"""Cancelled tasks let go of what they held: a holder whose task's frames hold it is freed
by reference counting alone (the automatic collector off) once its task is cancelled and
its cancellation forgotten."""

from __future__ import annotations

import asyncio
import gc
import weakref
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from beamclaw_obs import cancel_and_wait, forget_cancellation


class Holder:
    """Holds a task whose frames hold it back (as a connection and its sender do)."""

    def __init__(self) -> None:
        self.task = asyncio.get_running_loop().create_task(self.run())

    async def run(self) -> None:
        await asyncio.Event().wait()


@contextmanager
def collector_off() -> Iterator[None]:
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


async def _started() -> tuple[Holder, weakref.ref[Holder]]:
    holder = Holder()
    await asyncio.sleep(0)  # the task is inside its wait
    return holder, weakref.ref(holder)


async def test_gather_alone_leaves_the_cycle() -> None:
    """What the module is for: asyncio keeps the cancellation, and the holder with it."""
    with collector_off():
        holder, ref = await _started()
        holder.task.cancel()
        await asyncio.gather(holder.task, return_exceptions=True)
        del holder
        assert ref() is not None, "reference counting alone does not free it"


async def test_cancel_and_wait_frees_the_holder() -> None:
    with collector_off():
        holder, ref = await _started()
        await cancel_and_wait([holder.task])
        assert holder.task.cancelled()
        del holder
        assert ref() is None


async def test_a_done_callback_frees_a_task_cancelled_and_never_awaited() -> None:
    with collector_off():
        holder, ref = await _started()
        holder.task.cancel()
        holder.task.add_done_callback(forget_cancellation)
        del holder
        for _ in range(3):  # the cancellation lands, then the callback runs
            await asyncio.sleep(0)
        assert ref() is None


async def test_other_endings_are_left_as_they_are() -> None:
    async def fails() -> None:
        raise ValueError("kept")

    async def answers() -> int:
        return 7

    failed = asyncio.get_running_loop().create_task(fails())
    answered = asyncio.get_running_loop().create_task(answers())
    running = asyncio.get_running_loop().create_task(asyncio.sleep(10))
    await asyncio.wait([failed, answered])
    for task in (failed, answered, running):
        forget_cancellation(task)
    with pytest.raises(ValueError, match="kept"):
        failed.result()
    assert answered.result() == 7
    assert not running.done()
    await cancel_and_wait([running])
    assert running.cancelled()


async def test_nothing_to_wait_for() -> None:
    await cancel_and_wait([])
