"""Lazy package exports: importing a package loads nothing; a name loads its own submodule."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest


def _probe(code: str) -> object:
    r = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, check=False
    )
    assert r.returncode == 0, r.stderr
    return json.loads(r.stdout)


def test_importing_a_package_loads_none_of_its_submodules() -> None:
    loaded = _probe(
        "import json, sys, beamclaw_core, beamclaw_gateway, beamclaw_memory, beamclaw_mcp;"
        "print(json.dumps(sorted(m for m in sys.modules if m.count('.') and"
        " m.startswith(('beamclaw_core.', 'beamclaw_memory.', 'beamclaw_mcp.')))))"
    )
    assert loaded == ["beamclaw_mcp._version"]


def test_a_name_loads_only_its_submodule_and_is_the_same_object() -> None:
    result = _probe(
        "import json, sys\n"
        "from beamclaw_memory import resolve_database_url\n"
        "import beamclaw_memory.storage as s, beamclaw_memory as m\n"
        "print(json.dumps([resolve_database_url is s.resolve_database_url,"
        " 'beamclaw_memory.search' in sys.modules, 'numpy' in sys.modules,"
        " 'resolve_database_url' in dir(m), 'create_memory_service' in dir(m)]))"
    )
    assert result == [True, False, False, True, True]


def test_a_name_shared_with_its_submodule_is_never_shadowed() -> None:
    """``beamclaw_obs.scrub`` is both a function and its module: the function wins."""
    result = _probe(
        "import json, beamclaw_obs.scrub\n"
        "from beamclaw_obs import scrub\n"
        "print(json.dumps(callable(scrub) and not hasattr(scrub, '__path__')"
        " and scrub.__module__ == 'beamclaw_obs.scrub'))"
    )
    assert result is True


def test_an_unknown_name_is_an_attribute_error() -> None:
    import beamclaw_obs

    with pytest.raises(AttributeError, match="'beamclaw_obs' has no attribute 'no_such_name'"):
        getattr(beamclaw_obs, "no_such_name")  # noqa: B009 -- the name must be dynamic
