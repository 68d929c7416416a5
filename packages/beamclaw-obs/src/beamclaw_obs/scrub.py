"""Credential scrubbing applied at every boundary (seed 001 "Credential Scrubbing").

``scrub(text)`` replaces secrets with ``[REDACTED]``. It knows three kinds of secret:

* the seed's key/value patterns (``api_key=…``, ``token: …``, ``password=…``,
  ``secret=…``, ``Bearer …``) where only the value is redacted;
* well-known credential formats (OpenAI, Anthropic, OpenRouter, GitHub, Slack, AWS,
  Google, Stripe, Telegram bot tokens, JWTs, private-key blocks …);
* the literal values of every configured secret, registered with
  :func:`register_secret` when a ``{ env = … }`` secret is resolved.

Invariants: idempotent (``scrub(scrub(x)) == scrub(x)``); the replacement marker itself
never matches a pattern; never raises.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Mapping, Sequence
from typing import Any

REDACTED = "[REDACTED]"

# Value patterns: the key survives, the value is replaced.
_KV_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(
        r"""(?ix)
        (\b(?:api[_-]?key|access[_-]?token|auth[_-]?token|token|password|passwd|secret|client[_-]?secret)
        ["']?\s*[:=]\s*["']?)
        (?!\[REDACTED\])([^\s"',;&]+)
        """
    ),
    re.compile(r"(?i)(\bBearer\s+)(?!\[REDACTED\])([A-Za-z0-9._~+/=-]+)"),
    re.compile(r"(?i)(\bBasic\s+)(?!\[REDACTED\])([A-Za-z0-9+/=]{8,})"),
)

# Whole-token patterns: the entire match is replaced.
_TOKEN_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p)
    for p in (
        r"sk-ant-[A-Za-z0-9_-]{8,}",  # Anthropic
        r"sk-or-v1-[A-Za-z0-9]{16,}",  # OpenRouter
        r"sk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{16,}",  # OpenAI
        r"sk-[A-Za-z0-9]{8,}",  # seed: OpenAI legacy
        r"gh[pousr]_[A-Za-z0-9]{16,}",  # GitHub tokens
        r"github_pat_[A-Za-z0-9_]{22,}",
        r"xox[abposr]-[A-Za-z0-9-]{10,}",  # Slack
        r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b",  # AWS access key id
        r"AIza[0-9A-Za-z_-]{35}",  # Google API key
        r"\b[rsp]k_(?:live|test)_[0-9a-zA-Z]{16,}",  # Stripe
        r"\b\d{8,10}:AA[0-9A-Za-z_-]{30,}",  # Telegram bot token
        r"\bglpat-[0-9A-Za-z_-]{20,}",  # GitLab
        r"\bhf_[A-Za-z0-9]{30,}",  # Hugging Face
        r"\bgsk_[A-Za-z0-9]{20,}",  # Groq
        r"\bBSA[A-Za-z0-9_-]{20,}",  # Brave Search
        r"\beyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}",  # JWT
        r"-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----",
    )
)

_MIN_LITERAL = 6  # shorter "secrets" would redact ordinary words

_lock = threading.Lock()
_literals: frozenset[str] = frozenset()
_literal_re: re.Pattern[str] | None = None


def register_secret(value: str) -> None:
    """Remember a configured secret's literal value so it is redacted wherever it appears."""
    global _literals, _literal_re
    if len(value) < _MIN_LITERAL or value in _literals:
        return
    with _lock:
        _literals = _literals | {value}
        ordered = sorted(_literals, key=len, reverse=True)
        _literal_re = re.compile("|".join(re.escape(v) for v in ordered))


def forget_secrets() -> None:
    """Drop every registered literal (tests and config reloads)."""
    global _literals, _literal_re
    with _lock:
        _literals = frozenset()
        _literal_re = None


def scrub(text: str) -> str:
    """Return ``text`` with every known secret replaced by ``[REDACTED]``."""
    if not text:
        return text
    literal_re = _literal_re
    if literal_re is not None:
        text = literal_re.sub(REDACTED, text)
    for pattern in _TOKEN_PATTERNS:
        text = pattern.sub(REDACTED, text)
    for pattern in _KV_PATTERNS:
        text = pattern.sub(lambda m: m.group(1) + REDACTED, text)
    return text


def scrub_value(value: Any) -> Any:
    """Scrub every string inside a JSON-like value (dicts, lists, tuples), keys included."""
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, Mapping):
        items: Mapping[Any, Any] = value
        return {
            (scrub(k) if isinstance(k, str) else k): scrub_value(v) for k, v in items.items()
        }
    if isinstance(value, Sequence) and not isinstance(value, bytes | bytearray):
        seq: Sequence[Any] = value
        return [scrub_value(v) for v in seq]
    return value
