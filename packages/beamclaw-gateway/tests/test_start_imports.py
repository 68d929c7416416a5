"""What the gateway loads before it can answer ``/ready``: its web stack, the database and
the core, and not the stacks that serve later or only when configured — the provider HTTP
clients (warmed in a thread once ready), vectors and BM25 (first memory search), Alembic
(a database behind its heads), HTML parsing (first web fetch), detect-secrets (read from
the shipped table), the ``limits`` library (Redis rate-limit storage only), SQLAlchemy's
PostgreSQL dialect and its asyncio layer with the ORM (a PostgreSQL database), YAML (the first skill), jq (its tool's first
call), Playwright (the first browser call). A list of module names, never a time."""

from __future__ import annotations

import json
import subprocess
import sys

LATER = (
    "aiohttp",
    "alembic",
    "bm25s",
    "bs4",
    "detect_secrets",
    "httpx",
    "jq",
    "limits",
    "mcp",
    "numpy",
    "playwright",
    "rich",
    "sqlalchemy.dialects.postgresql",
    "sqlalchemy.ext.asyncio",
    "sqlalchemy.orm",
    "textual",
    "yaml",
)

_DRIVER = """
import json, sys
import beamclaw_gateway.config, beamclaw_gateway.runtime, beamclaw_gateway.app
import beamclaw_gateway.server
print(json.dumps(sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)))
"""


def test_the_gateway_imports_nothing_it_loads_later() -> None:
    r = subprocess.run(
        [sys.executable, "-c", _DRIVER, json.dumps(LATER)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == []


_WARMED = """
import json, sys
import beamclaw_gateway.config, beamclaw_gateway.runtime, beamclaw_gateway.app
import beamclaw_gateway.server
from beamclaw_gateway.composition import warm_provider_stack
warm_provider_stack()
print(json.dumps(sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)))
"""


def test_the_warmed_provider_stack_leaves_httpx_out() -> None:
    """What stays resident at rest once the provider stack is warmed: aiohttp, not httpx
    (and the rich console and pygments its command-line helper imports, ~7 MB)."""
    r = subprocess.run(
        [
            sys.executable,
            "-c",
            _WARMED,
            json.dumps(["aiohttp", "httpx", "limits", "pygments", "rich"]),
        ],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert json.loads(r.stdout) == ["aiohttp"]
