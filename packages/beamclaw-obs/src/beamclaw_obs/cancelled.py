"""Cancelled tasks that let go of what they held.

asyncio keeps a cancelled task's ``CancelledError`` until someone asks for the task's
result, so that the first ``result()`` or ``exception()`` raises it. The error's
traceback holds the task's last frames and their locals. ``asyncio.gather(...,
return_exceptions=True)``, ``asyncio.wait`` and a task cancelled and never awaited never
ask. When those frames hold an object that holds the task (a ``/ws`` connection and its
sender task, a turn's executor and its deadline), the two form a reference cycle that
only the garbage collector frees, with everything behind it.

Invariant: after :func:`forget_cancellation` (or :func:`cancel_and_wait`) a cancelled
task holds no traceback, so reference counting frees what only it kept.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable
from contextlib import suppress
from typing import Any

__all__ = ["cancel_and_wait", "forget_cancellation"]


def forget_cancellation(task: asyncio.Future[Any]) -> None:
    """Let go of the ``CancelledError`` ``task`` keeps, if it ended cancelled (usable as
    a done callback; nothing for a task that is running or ended otherwise)."""
    if task.done() and task.cancelled():
        with suppress(asyncio.CancelledError):
            task.result()


async def cancel_and_wait(tasks: Iterable[asyncio.Future[Any]]) -> None:
    """Cancel ``tasks``, wait until every one has ended, and forget their
    cancellations. A cancellation of the caller while it waits still propagates."""
    pending = list(tasks)
    for task in pending:
        task.cancel()
    if not pending:
        return
    await asyncio.gather(*pending, return_exceptions=True)
    for task in pending:
        forget_cancellation(task)
