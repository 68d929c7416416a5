"""Non-blocking event fan-out.

``emit(event_type, **data)`` builds an :class:`Event` and offers it to every registered
backend's bounded queue with ``put_nowait``. A full queue drops the event for that backend
and counts the drop; a backend that raises is counted and keeps running. Each backend is
drained by its own daemon thread, so ``emit`` is safe from any thread or event loop and
never blocks or raises into the caller. Payloads are scrubbed on the backend's thread
(the caller pays only for the enqueue).
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
        lane.thread.start()

    def remove_backend(self, name: str, timeout: float = 5.0) -> None:
        """Stop a backend after its queue drains (bounded by ``timeout``)."""
        with self._lock:
            lane = self._lanes.pop(name, None)
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
            event = Event(type=EventType(event_type), ts=time.time(), data=data)
            with self._lock:
                lanes = list(self._lanes.values())
            for lane in lanes:
                try:
                    lane.queue.put_nowait(event)
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
        while True:
            item = lane.queue.get()
            try:
                if item is _STOP:
                    try:
                        lane.backend.close()
                    except Exception:
                        lane.stats.failed += 1
                    return
                assert isinstance(item, Event)
                clean = Event(type=item.type, ts=item.ts, data=scrub_value(item.data))
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
