"""``read_section``: one section, file then environment, with the full loader's values.

Every case loads the same file and environment twice, through ``load_settings`` (the
whole root, pydantic-settings) and through ``read_section`` (the one table), and compares
the section both give.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel, Field

from beamclaw_obs import BeamclawSettingsBase, ConfigError, Section, load_settings, read_section


class Leaf(Section):
    depth: int = 1
    tags: list[str] = Field(default_factory=list)


class Branch(Section):
    name: str = "a"
    count: int = 3
    leaf: Leaf = Field(default_factory=Leaf)
    leaves: list[Leaf] = Field(default_factory=list)
    named: dict[str, Leaf] = Field(default_factory=dict)


class Other(Section):
    flag: bool = False


class Root(BeamclawSettingsBase):
    branch: Branch = Field(default_factory=Branch)
    other: Other = Field(default_factory=Other)


FILE = """
[branch]
name = "file"
count = 5
[branch.leaf]
depth = 2
tags = ["x"]
[other]
flag = true
"""

CASES: dict[str, tuple[str, dict[str, str]]] = {
    "defaults": ("", {}),
    "file only": (FILE, {}),
    "nested env over file": (
        FILE,
        {"BEAMCLAW_BRANCH__COUNT": "9", "BEAMCLAW_BRANCH__LEAF__DEPTH": "4"},
    ),
    "names in any case": (FILE, {"beamclaw_Branch__Leaf__DEPTH": "7"}),
    "a list value is JSON": (FILE, {"BEAMCLAW_BRANCH__LEAF__TAGS": '["a", "b"]'}),
    "a table value is JSON": (FILE, {"BEAMCLAW_BRANCH__LEAF": '{"depth": 8}'}),
    "the root as JSON, nested names win": (
        FILE,
        {
            "BEAMCLAW_BRANCH": '{"count": 11, "leaf": {"depth": 12, "tags": ["j"]}}',
            "BEAMCLAW_BRANCH__LEAF__DEPTH": "13",
        },
    ),
    "a list of tables": (FILE, {"BEAMCLAW_BRANCH__LEAVES": '[{"depth": 5}]'}),
    "a mapping of tables": (FILE, {"BEAMCLAW_BRANCH__NAMED": '{"k": {"depth": 6}}'}),
    "into a mapping": (FILE, {"BEAMCLAW_BRANCH__NAMED__K__DEPTH": "6"}),
    "other sections": (FILE, {"BEAMCLAW_OTHER__FLAG": "false", "BEAMCLAW_BRANCHES": "1"}),
}


def whole(keys: tuple[str, ...]) -> BaseModel:
    section: BaseModel = load_settings(Root).settings
    for key in keys:
        section = getattr(section, key)
    return section


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize(
    ("keys", "model"),
    [(("branch",), Branch), (("branch", "leaf"), Leaf), (("other",), Other)],
    ids=lambda v: ".".join(v) if isinstance(v, tuple) else "",
)
def test_a_section_reads_as_the_full_loader_reads_it(
    case: str,
    keys: tuple[str, ...],
    model: type[Section],
    beamclaw_home: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text, env = CASES[case]
    if text:
        beamclaw_home.mkdir(parents=True, exist_ok=True)
        (beamclaw_home / "beamclaw.toml").write_text(text)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    assert read_section(keys, model) == whole(keys)


def test_an_explicit_file_wins(beamclaw_home: Path, tmp_path: Path) -> None:
    beamclaw_home.mkdir(parents=True, exist_ok=True)
    (beamclaw_home / "beamclaw.toml").write_text("[branch]\ncount = 1\n")
    explicit = tmp_path / "explicit.toml"
    explicit.write_text("[branch]\ncount = 2\n")
    assert read_section(("branch",), Branch, explicit).count == 2


def test_an_invalid_value_names_the_file_and_the_key(beamclaw_home: Path) -> None:
    beamclaw_home.mkdir(parents=True, exist_ok=True)
    (beamclaw_home / "beamclaw.toml").write_text("[branch.leaf]\ndepth = 'deep'\n")
    with pytest.raises(ConfigError, match=r"beamclaw\.toml.*branch\.leaf\.depth"):
        read_section(("branch", "leaf"), Leaf)


def test_a_problem_elsewhere_is_not_its_concern(beamclaw_home: Path) -> None:
    beamclaw_home.mkdir(parents=True, exist_ok=True)
    (beamclaw_home / "beamclaw.toml").write_text("[branch]\ncount = 'x'\n[other]\nflag = true\n")
    assert read_section(("other",), Other).flag is True
    with pytest.raises(ConfigError):
        load_settings(Root)


def test_it_loads_neither_pydantic_settings_nor_logging() -> None:
    code = (
        "import sys\n"
        "from beamclaw_obs import Section, read_section\n"
        "class S(Section):\n    x: int = 1\n"
        "read_section(('s',), S)\n"
        "print(sorted({'pydantic_settings', 'loguru', 'beamclaw_obs.config'} & set(sys.modules)))"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "[]"
