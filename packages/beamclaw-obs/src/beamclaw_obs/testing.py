"""Test doubles for code that emits events: record what reached the backends."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager

from beamclaw_obs.emitter import get_emitter
from beamclaw_obs.events import Event, EventType


class EventRecorder:
    """An obs backend that keeps every (scrubbed) event it receives."""

    def __init__(self, name: str = "event-recorder") -> None:
        self.name = name
        self.events: list[Event] = []

    def handle(self, event: Event) -> None:
        self.events.append(event)

    def close(self) -> None:
        return None

    def of(self, kind: EventType) -> list[Event]:
        """Events of one type emitted so far (waits for the process emitter to drain)."""
        get_emitter().flush()
        return [e for e in self.events if e.type is kind]


@contextmanager
def recording_events(name: str = "event-recorder") -> Generator[EventRecorder]:
    """Attach an :class:`EventRecorder` to the process-wide emitter for the block."""
    recorder = EventRecorder(name)
    get_emitter().add_backend(recorder)
    try:
        yield recorder
    finally:
        get_emitter().remove_backend(recorder.name)
