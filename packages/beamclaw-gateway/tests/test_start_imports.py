"""What the gateway loads before it can answer ``/ready``: its web stack, the database and
the core, and not the stacks that serve later or only when configured — the provider HTTP
clients (warmed in a thread once ready), vectors and BM25 (first memory search), Alembic
(a database behind its heads), HTML parsing (first web fetch), detect-secrets (read from
the shipped table), the ``limits`` library (Redis rate-limit storage only), SQLAlchemy's
PostgreSQL dialect and its asyncio layer with the ORM (a PostgreSQL database), YAML (the first skill), jq (its tool's first
call), Playwright (the first browser call), the scheduler's runner (``[scheduler]
enabled``), and the API (FastAPI, its OpenAPI models, the ``pydantic.v1`` check of
response models, every route group: built once listening, the probes answer without it;
its front, ``/v1`` and ``/ws``, first, without the other groups).
A list of module names, never a time."""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

LATER = (
    "aiohttp",
    "alembic",
    "beamclaw_gateway.api",
    "beamclaw_gateway.auth_scheme",
    "beamclaw_gateway.openai_models",
    "beamclaw_gateway.routes_health",
    "beamclaw_gateway.routes_openai",
    "beamclaw_gateway.routes_ws",
    "beamclaw_gateway.ui",
    "beamclaw_scheduler.ports",
    "beamclaw_scheduler.service",
    "bm25s",
    "bs4",
    "detect_secrets",
    "fastapi",
    "httpx",
    "jq",
    "limits",
    "mcp",
    "numpy",
    "playwright",
    "pydantic.v1",
    "rich",
    "sqlalchemy.dialects.postgresql",
    "sqlalchemy.ext.asyncio",
    "sqlalchemy.orm",
    "textual",
    "yaml",
)


def loaded_after(imports: str, modules: Sequence[str]) -> list[str]:
    """Which of ``modules`` a fresh interpreter holds after running ``imports``."""
    driver = (
        f"import json, sys\n{imports}\n"
        "print(json.dumps(sorted(m for m in json.loads(sys.argv[1]) if m in sys.modules)))"
    )
    r = subprocess.run(
        [sys.executable, "-c", driver, json.dumps(list(modules))],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    found: list[str] = json.loads(r.stdout)
    return found


def test_the_gateway_imports_nothing_it_loads_later() -> None:
    imports = (
        "import beamclaw_gateway.config, beamclaw_gateway.runtime, beamclaw_gateway.app\n"
        "import beamclaw_gateway.server"
    )
    assert loaded_after(imports, LATER) == []


BEHIND_THE_FRONT = (
    "beamclaw_gateway.api",
    "beamclaw_gateway.routes_a2a",
    "beamclaw_gateway.routes_api",
    "beamclaw_gateway.routes_approvals",
    "beamclaw_gateway.routes_health",
    "beamclaw_gateway.routes_integrations",
    "beamclaw_gateway.routes_pairing",
    "beamclaw_gateway.routes_schedules",
    "beamclaw_gateway.routes_telegram",
    "beamclaw_gateway.routes_webhooks",
    "beamclaw_gateway.ui",
    "beamclaw_scheduler.beats",
)


def test_the_front_api_imports_no_other_route_group() -> None:
    """The front API (``/v1``, ``/ws``) is built first so that a client's first request
    waits for FastAPI and those groups only, not for the rest."""
    imports = "import beamclaw_gateway.server, beamclaw_gateway.api_front"
    assert loaded_after(imports, BEHIND_THE_FRONT) == []


def test_the_warmed_provider_stack_leaves_httpx_out() -> None:
    """What stays resident at rest once the provider stack is warmed: aiohttp, not httpx
    (and the rich console and pygments its command-line helper imports, ~7 MB)."""
    imports = (
        "import beamclaw_gateway.server\n"
        "from beamclaw_gateway.composition import warm_provider_stack\n"
        "warm_provider_stack()"
    )
    assert loaded_after(imports, ["aiohttp", "httpx", "limits", "pygments", "rich"]) == ["aiohttp"]


_STARTED = """
import asyncio, sys
from pathlib import Path
from beamclaw_gateway import GatewayRuntime
from beamclaw_gateway.testing import quiet_config

async def main():
    runtime = GatewayRuntime(quiet_config(), home=Path(sys.argv[1]))
    await runtime.start()
    await asyncio.sleep(0.3)
    print("aiohttp" in sys.modules)  # started, not yet listening: no warming
    runtime.warm()  # what the server does once its listener is up
    await runtime.stop()  # waits for the warming thread
    print("aiohttp" in sys.modules)

asyncio.run(main())
"""


def test_the_provider_stack_warms_once_the_listener_is_up(tmp_path: Path) -> None:
    """Warming in a thread during the start-up would compete with it for the interpreter
    (an import holds the GIL for most of its run): it starts when the server listens."""
    r = subprocess.run(
        [sys.executable, "-c", _STARTED, str(tmp_path / "home")],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["False", "True"]
