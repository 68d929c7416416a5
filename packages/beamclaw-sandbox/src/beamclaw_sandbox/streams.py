"""Docker's multiplexed exec stream, demultiplexed and captured within a bound (sans-IO).

:class:`FrameReader` turns bytes as they arrive into ``(stream, payload)`` frames (header:
stream id, three zero bytes, big-endian length); "need more input" is an empty list.
:class:`CappedCapture` keeps the head and the tail of a stream and counts the rest, so a
script that prints forever costs bounded memory.

Invariant: ``CappedCapture.text()`` equals the whole stream when it fit; otherwise it is
head + an explicit marker naming the omitted byte count + tail.
"""

from __future__ import annotations

STDOUT = 1
STDERR = 2
_HEADER = 8
TRUNCATION = "[... truncated: {omitted} of {total} bytes omitted ...]"


class FrameReader:
    """Incremental parser of the ``application/vnd.docker.raw-stream`` framing."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        """Add received bytes; return every frame now complete."""
        self._buffer.extend(data)
        frames: list[tuple[int, bytes]] = []
        while len(self._buffer) >= _HEADER:
            stream = self._buffer[0]
            size = int.from_bytes(self._buffer[4:8], "big")
            if len(self._buffer) < _HEADER + size:
                break
            frames.append((stream, bytes(self._buffer[_HEADER : _HEADER + size])))
            del self._buffer[: _HEADER + size]
        return frames

    @property
    def pending(self) -> int:
        """Bytes of an incomplete frame held back."""
        return len(self._buffer)


class CappedCapture:
    """Keeps at most ``limit`` bytes of a stream: two thirds head, one third tail."""

    def __init__(self, limit: int) -> None:
        self._head_limit = max(1, limit - limit // 3)
        self._tail_limit = limit // 3
        self._head = bytearray()
        self._tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        room = self._head_limit - len(self._head)
        if room > 0:
            self._head.extend(data[:room])
            data = data[room:]
        if data and self._tail_limit:
            self._tail.extend(data)
            if len(self._tail) > self._tail_limit:
                del self._tail[: len(self._tail) - self._tail_limit]

    @property
    def truncated(self) -> bool:
        return self.total > len(self._head) + len(self._tail)

    def text(self) -> str:
        if not self.truncated:
            return (self._head + self._tail).decode(errors="replace")
        head = self._head.decode(errors="replace")
        omitted = self.total - len(self._head) - len(self._tail)
        marker = TRUNCATION.format(omitted=omitted, total=self.total)
        tail = self._tail.decode(errors="replace")
        return f"{head}\n{marker}\n{tail}" if tail else f"{head}\n{marker}"
