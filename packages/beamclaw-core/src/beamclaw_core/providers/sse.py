"""A sans-IO Server-Sent Events decoder (WHATWG "event stream" interpretation).

Feed it lines (without their line terminator); a blank line dispatches the event built so
far. ``data`` fields join with ``\\n``; comment lines (``:``) and ``id``/``retry`` are
ignored; an event with no data is not dispatched. :meth:`SSEDecoder.flush` returns a
last event that was not followed by a blank line (some servers omit it).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class ServerSentEvent:
    """One dispatched event. ``event`` is ``message`` when the server named none."""

    event: str
    data: str


class SSEDecoder:
    """Turns event-stream lines into :class:`ServerSentEvent` values."""

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []

    def feed(self, line: str) -> ServerSentEvent | None:
        """Consume one line; returns an event when ``line`` is blank and one is pending."""
        if not line:
            return self._dispatch()
        if line.startswith(":"):
            return None
        field, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if field == "data":
            self._data.append(value)
        elif field == "event":
            self._event = value
        return None

    def flush(self) -> ServerSentEvent | None:
        """The pending event at end of input, if any."""
        return self._dispatch()

    def _dispatch(self) -> ServerSentEvent | None:
        if not self._data:
            self._event = ""
            return None
        event = ServerSentEvent(self._event or "message", "\n".join(self._data))
        self._event = ""
        self._data = []
        return event
