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
