"""Non-blocking event fan-out.

``emit(event_type, **data)`` builds an :class:`Event` and offers it to every registered
backend's bounded queue with ``put_nowait``. A full queue drops the event for that backend
and counts the drop; a backend that raises is counted and keeps running. Each backend is
drained by its own daemon thread, so ``emit`` is safe from any thread or event loop and
never blocks or raises into the caller. Payloads are scrubbed once, by the first backend
thread that reaches the event (the caller pays only for the enqueues).

A backend thread that just found events polls its queue every ``POLL_SECONDS`` instead
of sleeping on it: while events keep coming, an ``emit`` never wakes a thread (each wake
costs the event loop a GIL hand-over), and the thread takes them in batches. After
``IDLE_POLLS`` empty polls it sleeps on the queue until the next event.
"""

from __future__ import annotations

import contextlib
import queue
import threading
import time
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from beamclaw_obs.events import Event, EventType
from beamclaw_obs.scrub import scrub_value

DEFAULT_QUEUE_SIZE = 10_000
POLL_SECONDS = 0.02
IDLE_POLLS = 50
_STOP = object()


@runtime_checkable
class ObsBackend(Protocol):
    """A consumer of events (seed 001 ``bc_observer``). Called on its own thread."""

    name: str

    def handle(self, event: Event) -> None:
        """Process one (already scrubbed) event. May raise; the error is counted."""
        ...

    def close(self) -> None:
        """Release resources; called once after the queue has drained."""
        ...


@dataclass
class BackendStats:
    """Counters for one backend."""

    delivered: int = 0
    dropped: int = 0
    failed: int = 0


class _Pending:
    """One emitted event shared by every backend's queue, scrubbed once.

    The first backend thread to reach it scrubs it; a race only means two threads compute
    the same value (attribute assignment is atomic), so no lock is needed.
    """

    __slots__ = ("clean", "raw")

    def __init__(self, raw: Event) -> None:
        self.raw = raw
        self.clean: Event | None = None

    def cleaned(self) -> Event:
        clean = self.clean
        if clean is None:
            raw = self.raw
            clean = Event(type=raw.type, ts=raw.ts, data=scrub_value(raw.data))
            self.clean = clean
        return clean


@dataclass
class _Lane:
    backend: ObsBackend
    queue: queue.Queue[object]
    thread: threading.Thread
    stats: BackendStats = field(default_factory=BackendStats)


class Emitter:
    """Fans events out to backends over bounded per-backend queues."""

    def __init__(self, queue_size: int = DEFAULT_QUEUE_SIZE) -> None:
        self._queue_size = queue_size
        self._lanes: dict[str, _Lane] = {}
        self._active: tuple[_Lane, ...] = ()
        """The lanes ``emit`` offers to: replaced (never changed) under the lock, read
        without it."""
        self._lock = threading.Lock()

    def add_backend(self, backend: ObsBackend, queue_size: int | None = None) -> None:
        """Start delivering events to ``backend`` (replacing one with the same name)."""
        self.remove_backend(backend.name)
        q: queue.Queue[object] = queue.Queue(maxsize=queue_size or self._queue_size)
        lane = _Lane(backend=backend, queue=q, thread=threading.Thread())
        lane.thread = threading.Thread(
            target=self._drain, args=(lane,), name=f"obs-{backend.name}", daemon=True
        )
        with self._lock:
            self._lanes[backend.name] = lane
            self._active = tuple(self._lanes.values())
        lane.thread.start()

    def remove_backend(self, name: str, timeout: float = 5.0) -> None:
        """Stop a backend after its queue drains (bounded by ``timeout``)."""
        with self._lock:
            lane = self._lanes.pop(name, None)
            self._active = tuple(self._lanes.values())
        if lane is None:
            return
        with contextlib.suppress(queue.Full):
            lane.queue.put(_STOP, timeout=timeout)
        lane.thread.join(timeout)

    def backends(self) -> list[str]:
        with self._lock:
            return sorted(self._lanes)

    def stats(self) -> dict[str, BackendStats]:
        """Delivered/dropped/failed counts per backend."""
        with self._lock:
            return {name: lane.stats for name, lane in self._lanes.items()}

    def emit(self, event_type: EventType, /, **data: Any) -> None:
        """Offer an event to every backend. Never blocks, never raises."""
        try:
            kind = event_type if type(event_type) is EventType else EventType(event_type)
            pending = _Pending(Event(type=kind, ts=time.time(), data=data))
            for lane in self._active:
                try:
                    lane.queue.put_nowait(pending)
                except queue.Full:
                    lane.stats.dropped += 1
        except Exception:
            return

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queue is empty (tests, shutdown). True when drained in time."""
        deadline = time.monotonic() + timeout
        with self._lock:
            lanes = list(self._lanes.values())
        for lane in lanes:
            while lane.queue.unfinished_tasks:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)
        return True

    def close(self) -> None:
        """Drain and stop every backend."""
        for name in self.backends():
            self.remove_backend(name)

    @staticmethod
    def _drain(lane: _Lane) -> None:
        idle = IDLE_POLLS
        while True:
            try:
                item = lane.queue.get_nowait()
                idle = 0
            except queue.Empty:
                if idle < IDLE_POLLS:
                    idle += 1
                    time.sleep(POLL_SECONDS)
                    continue
                item = lane.queue.get()
            try:
                if item is _STOP:
                    try:
                        lane.backend.close()
                    except Exception:
                        lane.stats.failed += 1
                    return
                assert isinstance(item, _Pending)
                clean = item.cleaned()
                try:
                    lane.backend.handle(clean)
                    lane.stats.delivered += 1
                except Exception:
                    lane.stats.failed += 1
            finally:
                lane.queue.task_done()


_default = Emitter()


def get_emitter() -> Emitter:
    """The process-wide emitter that :func:`emit` uses."""
    return _default


def emit(event_type: EventType, /, **data: Any) -> None:
    """Emit an event on the process-wide emitter. Never blocks, never raises."""
    _default.emit(event_type, **data)
