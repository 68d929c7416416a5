"""The curated public surfaces of providers, parsing and testing."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize(
    "module", ["beamclaw_core.providers", "beamclaw_core.parsing", "beamclaw_core.testing"]
)
def test_all_is_unique_and_importable(module: str) -> None:
    """(Ordering is enforced by ruff RUF022.)"""
    mod = importlib.import_module(module)
    names = list(mod.__all__)
    assert len(names) == len(set(names))
    for name in names:
        assert getattr(mod, name) is not None
