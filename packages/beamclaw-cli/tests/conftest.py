"""Helpers to run the real ``beamclaw`` entry point as a subprocess."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

BEAMCLAW = str(Path(sys.executable).parent / "beamclaw")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


Run = Callable[..., subprocess.CompletedProcess[str]]


@pytest.fixture
def run_cli(beamclaw_home: Path) -> Run:
    """Run ``beamclaw ARGS`` with the test's environment; returns the completed process."""

    def run(
        *args: str, env: dict[str, str] | None = None, timeout: float = 60, input: str | None = None
    ) -> subprocess.CompletedProcess[str]:
        full_env = {**os.environ, **(env or {})}
        return subprocess.run(
            [BEAMCLAW, *args],
            capture_output=True,
            text=True,
            env=full_env,
            timeout=timeout,
            input=input,
            check=False,
        )

    return run
