"""The tool bridge's wire: length-prefixed JSON-RPC 2.0 frames (sans-IO).

A frame is a 4-byte big-endian length then that many bytes of UTF-8 JSON. A request is
``{"jsonrpc": "2.0", "id", "method", "params": {"token", …}}``; the answer carries the
same ``id`` and either ``result`` or ``error`` (``code``, ``message``).

Invariants: :class:`FrameDecoder` never holds more than :data:`MAX_FRAME` bytes of one
frame (a larger announced length is :class:`FrameTooLargeError`, and the connection ends);
:func:`parse_request` turns any well-framed garbage into a :class:`RpcError` answer, never
an exception that escapes.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, cast

from beamclaw_sandbox.errors import BeamclawSandboxError

MAX_FRAME = 4 * 1024 * 1024
"""Largest frame either side accepts (4 MiB)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
UNAUTHORIZED = -32001
DENIED = -32002


class FrameTooLargeError(BeamclawSandboxError, ValueError):
    """A frame announced more than :data:`MAX_FRAME` bytes."""


@dataclass(frozen=True)
class RpcError(BeamclawSandboxError):
    """An error answer; ``id`` is None when the request could not be read."""

    code: int
    message: str
    id: Any = None


@dataclass(frozen=True)
class Request:
    id: Any
    method: str
    params: dict[str, Any]


def encode_frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message, separators=(",", ":")).encode()
    if len(body) > MAX_FRAME:
        raise FrameTooLargeError(f"frame of {len(body)} bytes exceeds {MAX_FRAME}")
    return len(body).to_bytes(4, "big") + body


class FrameDecoder:
    """Incremental frame reader: ``feed`` bytes, get complete frame bodies."""

    def __init__(self) -> None:
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[bytes]:
        self._buffer.extend(data)
        bodies: list[bytes] = []
        while len(self._buffer) >= 4:
            size = int.from_bytes(self._buffer[:4], "big")
            if size > MAX_FRAME:
                raise FrameTooLargeError(f"frame of {size} bytes exceeds {MAX_FRAME}")
            if len(self._buffer) < 4 + size:
                break
            bodies.append(bytes(self._buffer[4 : 4 + size]))
            del self._buffer[: 4 + size]
        return bodies


def parse_request(body: bytes) -> Request:
    """A request from a frame body. Raises :class:`RpcError` (parse/invalid request)."""
    try:
        loaded: Any = json.loads(body)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise RpcError(PARSE_ERROR, f"not JSON: {e}") from e
    if not isinstance(loaded, dict):
        raise RpcError(INVALID_REQUEST, "a request is a JSON object")
    message = cast(dict[str, Any], loaded)
    request_id = message.get("id")
    method = message.get("method")
    params = message.get("params", {})
    if message.get("jsonrpc") != "2.0" or not isinstance(method, str):
        raise RpcError(INVALID_REQUEST, "need jsonrpc '2.0' and a method", request_id)
    if not isinstance(params, dict):
        raise RpcError(INVALID_PARAMS, "params must be an object", request_id)
    return Request(request_id, method, cast(dict[str, Any], params))


def result_message(request_id: Any, result: Any) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "result": result}


def error_message(error: RpcError) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": error.id,
        "error": {"code": error.code, "message": error.message},
    }
