"""Shared failure kinds: a leaf module (stdlib only) so the pure loop machine can name them.

Invariant: this module imports nothing but the standard library's ``enum``; the import-linter
contract "The loop machine is pure" relies on it without an indirect-import allowance.
"""

from __future__ import annotations

import enum

__all__ = ["ErrorKind"]


class ErrorKind(enum.StrEnum):
    """Why an LLM call failed. Classification only; retrying is the loop machine's decision."""

    AUTH = "auth"  # 401/403: never retried
    RATE_LIMIT = "rate_limit"  # 429: retried, honouring retry_after
    NETWORK = "network"  # timeouts, refused/reset connections, 5xx, truncated stream: retried
    INVALID_REQUEST = "invalid_request"  # 400/404/422, malformed stream: never retried
    CONTEXT_OVERFLOW = "context_overflow"  # prompt too long: compact, then retry once
    UNKNOWN = "unknown"

    @property
    def retryable(self) -> bool:
        return self in (ErrorKind.RATE_LIMIT, ErrorKind.NETWORK, ErrorKind.UNKNOWN)
