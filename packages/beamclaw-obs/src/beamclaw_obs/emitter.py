"""Non-blocking event fan-out.

``emit(event_type, **data)`` builds an :class:`Event` and appends it to every registered
backend's bounded queue (a ``deque``: one append, no lock, where ``queue.Queue.put`` took
a lock and notified a condition — a dozen calls per event, six events a turn). A full
queue drops the event for that backend
and counts the drop; a backend that raises is counted and keeps running. Each backend is
drained by its own daemon thread, so ``emit`` is safe from any thread or event loop and
never blocks or raises into the caller. Payloads are scrubbed once, by the first backend
thread that reaches the event (the caller pays only for the enqueues).

A backend thread that just found events polls its queue every ``POLL_SECONDS`` instead
of sleeping on it: while events keep coming, an ``emit`` never wakes a thread (each wake
costs the event loop a GIL hand-over), and the thread takes them in batches. After
``IDLE_POLLS`` empty polls it parks on an event that the next ``emit`` sets.

Invariants (the GIL orders the steps below; ``deque.append``/``popleft`` are atomic):

* A parked thread is always woken: it marks itself parked *before* it looks at the queue
  a last time, and ``emit`` appends *before* it reads the mark.
* :meth:`Emitter.flush` returns only when no event is queued or being handled: the
  thread marks itself busy *before* it takes an event and clears the mark after handling
  it.
"""

from __future__ import annotations

import threading
import time
from collections import deque
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
    limit: int
    thread: threading.Thread
    queue: deque[object] = field(default_factory=lambda: deque[object]())
    stats: BackendStats = field(default_factory=BackendStats)
    wake: threading.Event = field(default_factory=threading.Event)
    parked: bool = False
    """The thread sleeps on ``wake`` (set by the next ``emit``)."""
    busy: bool = False
    """The thread holds an event it took from ``queue`` and has not handled yet."""

    def offer(self, item: object) -> bool:
        """Queue ``item`` unless the queue is full (approximately: two threads may both
        pass the check); False when dropped."""
        if len(self.queue) >= self.limit:
            return False
        self.post(item)
        return True

    def post(self, item: object) -> None:
        self.queue.append(item)
        if self.parked:
            self.wake.set()


class Emitter:
    """Fans events out to backends over bounded per-backend queues."""

    def __init__(
        self,
        queue_size: int = DEFAULT_QUEUE_SIZE,
        *,
        poll_seconds: float = POLL_SECONDS,
        idle_polls: int = IDLE_POLLS,
    ) -> None:
        self._queue_size = queue_size
        self._poll_seconds = poll_seconds
        self._idle_polls = idle_polls
        self._lanes: dict[str, _Lane] = {}
        self._active: tuple[_Lane, ...] = ()
        """The lanes ``emit`` offers to: replaced (never changed) under the lock, read
        without it."""
        self._lock = threading.Lock()

    def add_backend(self, backend: ObsBackend, queue_size: int | None = None) -> None:
        """Start delivering events to ``backend`` (replacing one with the same name)."""
        self.remove_backend(backend.name)
        lane = _Lane(
            backend=backend, limit=queue_size or self._queue_size, thread=threading.Thread()
        )
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
        lane.post(_STOP)  # past the limit: a stop is never dropped
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
                if not lane.offer(pending):
                    lane.stats.dropped += 1
        except Exception:
            return

    def flush(self, timeout: float = 5.0) -> bool:
        """Wait until every queue is empty (tests, shutdown). True when drained in time."""
        deadline = time.monotonic() + timeout
        with self._lock:
            lanes = list(self._lanes.values())
        for lane in lanes:
            while lane.queue or lane.busy:
                if time.monotonic() > deadline:
                    return False
                time.sleep(0.005)
        return True

    def close(self) -> None:
        """Drain and stop every backend."""
        for name in self.backends():
            self.remove_backend(name)

    def _drain(self, lane: _Lane) -> None:
        idle = polls = self._idle_polls
        while True:
            lane.busy = True
            try:
                item = lane.queue.popleft()
                idle = 0
            except IndexError:
                lane.busy = False
                if idle < polls:
                    idle += 1
                    time.sleep(self._poll_seconds)
                    continue
                lane.parked = True
                if not lane.queue:
                    lane.wake.wait()
                lane.wake.clear()
                lane.parked = False
                continue
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
                lane.busy = False


_default = Emitter()


def get_emitter() -> Emitter:
    """The process-wide emitter that :func:`emit` uses."""
    return _default


def emit(event_type: EventType, /, **data: Any) -> None:
    """Emit an event on the process-wide emitter. Never blocks, never raises."""
    _default.emit(event_type, **data)
