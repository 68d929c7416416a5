"""emit(): non-blocking fan-out, bounded queues with drop counting, isolation, scrubbing."""

from __future__ import annotations

import threading
import time

import pytest

from beamclaw_obs import Emitter, Event, EventType, register_secret
from beamclaw_obs.scrub import forget_secrets


class Recorder:
    def __init__(self, name: str = "rec", block: threading.Event | None = None) -> None:
        self.name = name
        self.events: list[Event] = []
        self.block = block
        self.closed = False

    def handle(self, event: Event) -> None:
        if self.block is not None:
            self.block.wait(5)
        self.events.append(event)

    def close(self) -> None:
        self.closed = True


class Exploding:
    name = "boom"

    def handle(self, event: Event) -> None:
        raise RuntimeError("backend bug")

    def close(self) -> None:
        return None


def test_events_reach_every_backend_in_order() -> None:
    em = Emitter()
    a, b = Recorder("a"), Recorder("b")
    em.add_backend(a)
    em.add_backend(b)
    for i in range(20):
        em.emit(EventType.TOOL_CALL_START, tool_name="bash", n=i)
    assert em.flush()
    assert [e.data["n"] for e in a.events] == list(range(20))
    assert [e.data["n"] for e in b.events] == list(range(20))
    assert a.events[0].type is EventType.TOOL_CALL_START
    em.close()
    assert a.closed and b.closed


def test_full_queue_drops_and_counts_without_blocking() -> None:
    em = Emitter()
    gate = threading.Event()
    slow = Recorder("slow", block=gate)
    em.add_backend(slow, queue_size=5)
    start = time.monotonic()
    for i in range(100):
        em.emit(EventType.LLM_REQUEST, n=i)
    elapsed = time.monotonic() - start
    gate.set()
    assert em.flush()
    stats = em.stats()["slow"]
    assert stats.dropped >= 100 - 6  # queue of 5 plus the one being handled
    assert stats.delivered + stats.dropped == 100
    assert elapsed < 1.0  # a blocking emit would wait 5 s per event on the gate
    em.close()


def test_flush_waits_for_the_event_a_backend_is_handling() -> None:
    em = Emitter()
    gate, started = threading.Event(), threading.Event()

    class Slow(Recorder):
        def handle(self, event: Event) -> None:
            started.set()
            super().handle(event)

    slow = Slow("slow", block=gate)
    em.add_backend(slow)
    em.emit(EventType.LLM_REQUEST, n=1)
    assert started.wait(5)  # taken from the queue, being handled
    assert not em.flush(timeout=0.2), "the queue is empty, but the event is not handled yet"
    gate.set()
    assert em.flush() and len(slow.events) == 1
    em.close()


def test_a_parked_backend_thread_is_woken_by_every_next_event() -> None:
    # no polling: the thread parks as soon as its queue is empty, so each event below
    # races the thread going to sleep; a lost wake-up would leave an event undelivered
    em = Emitter(idle_polls=0)
    rec = Recorder()
    em.add_backend(rec)

    def emitter(first: int) -> None:
        for n in range(first, first + 300):
            em.emit(EventType.LLM_REQUEST, n=n)
            if n % 7 == 0:
                time.sleep(0.0001)

    threads = [threading.Thread(target=emitter, args=(k * 1000,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert em.flush(timeout=10)
    assert sorted(e.data["n"] for e in rec.events) == [
        k * 1000 + n for k in range(4) for n in range(300)
    ]
    for n in range(50):  # one at a time: each must arrive while the thread is parked
        em.emit(EventType.LLM_REQUEST, n=-n)
        deadline = time.monotonic() + 5
        while len(rec.events) < 1200 + n + 1 and time.monotonic() < deadline:
            time.sleep(0.0005)
        assert len(rec.events) == 1200 + n + 1, "an emit did not wake the parked thread"
    em.close()


def test_failing_backend_is_counted_and_isolated() -> None:
    em = Emitter()
    good = Recorder()
    em.add_backend(Exploding())
    em.add_backend(good)
    em.emit(EventType.SESSION_START, session_id="s1")
    em.emit(EventType.SESSION_END, session_id="s1")
    assert em.flush()
    assert em.stats()["boom"].failed == 2
    assert len(good.events) == 2
    assert good.events[0].session_id == "s1"
    em.close()


def test_emit_never_raises_on_bad_input() -> None:
    em = Emitter()
    rec = Recorder()
    em.add_backend(rec)
    em.emit("not-an-event-type")  # type: ignore[arg-type]  # deliberately wrong
    em.emit(EventType.GATEWAY_STOP, obj=object())
    assert em.flush()
    assert [e.type for e in rec.events] == [EventType.GATEWAY_STOP]
    em.close()


def test_payloads_are_scrubbed_before_backends_see_them() -> None:
    forget_secrets()
    register_secret("hunter2-very-secret")
    em = Emitter()
    rec = Recorder()
    em.add_backend(rec)
    em.emit(
        EventType.TOOL_CALL_START,
        tool_name="http_request",
        args={"headers": {"Authorization": "Bearer abc.def.ghi"}, "body": "pw hunter2-very-secret"},
    )
    assert em.flush()
    args = rec.events[0].data["args"]
    assert "abc.def.ghi" not in str(args)
    assert "hunter2-very-secret" not in str(args)
    em.close()
    forget_secrets()


@pytest.mark.parametrize("name", [e.value for e in EventType])
def test_catalogue_values_are_snake_case(name: str) -> None:
    assert name == name.lower() and " " not in name


def test_each_event_is_scrubbed_once_and_shared_by_backends() -> None:
    em = Emitter()
    a, b = Recorder("a"), Recorder("b")
    em.add_backend(a)
    em.add_backend(b)
    em.emit(EventType.TOOL_CALL_START, args={"cmd": "echo sk-abcdefghijklmnop1234567890"})
    assert em.flush()
    assert a.events[0] is b.events[0]  # one scrubbed copy, not one per backend
    assert "sk-abcdefghijklmnop" not in str(a.events[0].data)
    em.close()
