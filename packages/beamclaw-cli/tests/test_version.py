"""``beamclaw version``'s package versions: read from the ``.dist-info`` names, the same
versions ``importlib.metadata`` reports."""

from __future__ import annotations

import sys
from importlib.metadata import version
from pathlib import Path

import pytest

from beamclaw_cli.commands.version import PACKAGES, package_versions


def test_the_versions_are_importlib_metadata_s() -> None:
    assert package_versions() == {name: version(name) for name in PACKAGES}


def test_the_first_dist_info_on_the_path_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "beamclaw_obs-9.8.7.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    versions = package_versions()
    assert versions["beamclaw-obs"] == "9.8.7"
    assert versions["beamclaw-tools"] == version("beamclaw-tools")


def test_a_package_that_is_not_installed_says_so(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "beamclaw_obs-1.2.3.dist-info").mkdir()
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    versions = package_versions()
    assert versions["beamclaw-obs"] == "1.2.3"
    assert versions["beamclaw-core"] == "not installed"
