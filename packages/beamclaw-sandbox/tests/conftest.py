"""Fixtures for beamclaw-sandbox tests: the real Docker engine and the real image.

``sandbox_image`` builds the image once when it is missing (cached by Docker between
runs); without an engine the tests fail with the reason (``make test`` starts dockerd).
``make_sandbox(bridge=..., **settings)`` starts a :class:`Sandbox` with its own home (so its own
containers and reaper scope) and stops it after the test.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any

import pytest

from beamclaw_sandbox import BeamclawSandboxError, Sandbox, SandboxSettings
from beamclaw_sandbox.bridge import ToolBridge
from beamclaw_sandbox.testing import require_image

HOST_ENV = {
    "OPENAI_API_KEY": "sk-host-provider-key",
    "BEAMCLAW_GATEWAY_TOKEN": "gateway-token-on-host",
    "TZ": "Europe/Paris",
    "HOME": "/root",
}
"""A host environment full of things a container must not see (besides ``TZ``)."""


@pytest.fixture(scope="session")
def sandbox_image() -> str:
    try:
        return require_image().image
    except BeamclawSandboxError as e:
        pytest.fail(f"{e} (`make services` installs and starts Docker)")


@pytest.fixture
async def make_sandbox(sandbox_image: str, tmp_path: Path) -> AsyncIterator[Callable[..., Any]]:
    started: list[Sandbox] = []

    async def factory(
        *,
        home: Path | None = None,
        host_env: Mapping[str, str] = HOST_ENV,
        bridge: ToolBridge | None = None,
        **values: Any,
    ) -> Sandbox:
        settings = SandboxSettings(enabled=True, image=sandbox_image, **values)
        sandbox = Sandbox(
            settings, home=home or tmp_path / "home", host_env=host_env, bridge=bridge
        )
        await sandbox.start()
        started.append(sandbox)
        return sandbox

    yield factory
    for sandbox in started:
        await sandbox.stop()
