"""Scrubber cost per 10 KB: typical text (no secrets) and text full of secrets.

Baseline, measured in the same run: the seed's seven patterns (seed 001) applied with
``re.sub`` — what the original scrubber did. The ratio says what the extra formats
(detect-secrets' detectors, BeamClaw's own, literal secrets) and the idempotence passes
cost on top. Medians over rounds; each round scrubs the sample several times.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from beamclaw_obs import forget_secrets, register_secret, scrub
from beamclaw_obs.scrub import secret_formats
from bench.common import median, traced_peak

SIZE = 10 * 1024
ROUNDS = 9
CALLS_PER_ROUND = 20

_TYPICAL_PARTS = (
    "The deployment finished at 14:02 and every health check passed; the next step is to "
    "rotate the logs and archive last week's reports.\n",
    "def fetch(url: str, *, timeout: float = 5.0) -> dict[str, object]:\n"
    "    response = client.get(url, timeout=timeout)\n    return response.json()\n",
    '{"model": "gpt-4o", "max_tokens": 512, "temperature": 0.2, "messages": 3}\n',
    "2026-11-22T09:14:03Z INFO gateway request path=/v1/chat/completions status=200 "
    "duration_ms=812 session=session-3f1c2a9d\n",
    "commit 3f1c2a9d8e7b6a5f4e3d2c1b0a9f8e7d6c5b4a3f\nAuthor: Alice <alice@example.com>\n",
    "| name | size | modified |\n|---|---|---|\n| notes.md | 4.1 KB | yesterday |\n",
)
_SECRET_PARTS = (
    "api_key=FAKEvalue0123456789\n",
    "Authorization: Bearer fake.token-0123456789abcdef\n",
    "OPENAI_API_KEY=sk-proj-FAKEfake12FAKEfake12FAKEfake12\n",
    "token: ghp_FAKEfake0123456789FAKEfake0123456789\n",
    "aws AKIAFAKEFAKEFAKE1234 and xoxb-1234567890-FAKEFAKEFAKE\n",
    "postgres://admin:FakePass123@db.example.com:5432/app\n",
    "password='correct horse' and the literal configured-secret-FAKE-42 again\n",
    "eyJhbGciOiJub25lIn0.eyJzdWIiOiJmYWtlIn0.ZmFrZXNpZ25hdHVyZQ\n",
)
_SEED_PATTERNS = tuple(
    re.compile(p)
    for p in (
        r"api[_-]?key\s*[:=]\s*\S+",
        r"token\s*[:=]\s*\S+",
        r"password\s*[:=]\s*\S+",
        r"secret\s*[:=]\s*\S+",
        r"Bearer\s+\S+",
        r"sk-[A-Za-z0-9]+",
        r"ghp_[A-Za-z0-9]+",
    )
)


def _fill(parts: tuple[str, ...]) -> str:
    text = ""
    i = 0
    while len(text) < SIZE:
        text += parts[i % len(parts)]
        i += 1
    return text[:SIZE]


def _seed_scrub(text: str) -> str:
    for pattern in _SEED_PATTERNS:
        text = pattern.sub("[REDACTED]", text)
    return text


def _per_call_us(fn: Callable[[str], str], text: str) -> float:
    samples: list[float] = []
    for _ in range(ROUNDS):
        start = time.perf_counter()
        for _ in range(CALLS_PER_ROUND):
            fn(text)
        samples.append((time.perf_counter() - start) / CALLS_PER_ROUND * 1e6)
    return median(samples)


def run() -> dict[str, object]:
    forget_secrets()
    register_secret("configured-secret-FAKE-42")
    typical, secrets = _fill(_TYPICAL_PARTS), _fill(_SECRET_PARTS)
    scrub(typical)  # warm up: the first call derives detect-secrets' patterns
    typical_us = _per_call_us(scrub, typical)
    secrets_us = _per_call_us(scrub, secrets)
    seed_typical_us = _per_call_us(_seed_scrub, typical)
    seed_secrets_us = _per_call_us(_seed_scrub, secrets)
    with traced_peak() as peak:
        scrub(secrets)
    peak_bytes = peak()
    redactions = scrub(secrets).count("[REDACTED]")
    forget_secrets()
    return {
        "formats": len(secret_formats()),
        "typical_us_per_10kb": round(typical_us, 1),
        "secrets_us_per_10kb": round(secrets_us, 1),
        "seed_baseline_typical_us_per_10kb": round(seed_typical_us, 1),
        "seed_baseline_secrets_us_per_10kb": round(seed_secrets_us, 1),
        "typical_ratio_vs_seed": round(typical_us / seed_typical_us, 2),
        "secrets_ratio_vs_seed": round(secrets_us / seed_secrets_us, 2),
        "typical_mb_per_s": round(SIZE / typical_us, 1),
        "redactions_in_secret_sample": redactions,
        "peak_kib_scrubbing_secrets": round(peak_bytes / 1024, 1),
    }
