"""The TOML editor behind onboard: only the chosen keys change, every other byte stays."""

from __future__ import annotations

import tomllib

from beamclaw_cli.onboard.toml_edit import set_table_keys, toml_secret, toml_string

DOC = """# top comment
[core]
default_provider = "openrouter"   # old choice
timezone = "Europe/Berlin"

[core.providers.local]  # mine
kind = "openai"
model = "old"
api_key = { env = "OLD" }
# trailing note

[gateway.http]
port = 1234
"""


def test_replaces_adds_and_removes_inside_one_table() -> None:
    out = set_table_keys(
        DOC,
        "core.providers.local",
        {"model": toml_string("new"), "base_url": toml_string("http://h/v1"), "api_key": None},
    )
    assert out.splitlines() == [
        "# top comment",
        "[core]",
        'default_provider = "openrouter"   # old choice',
        'timezone = "Europe/Berlin"',
        "",
        "[core.providers.local]  # mine",
        'kind = "openai"',
        'model = "new"',
        'base_url = "http://h/v1"',
        "# trailing note",
        "",
        "[gateway.http]",
        "port = 1234",
    ]
    assert tomllib.loads(out)["core"]["providers"]["local"]["base_url"] == "http://h/v1"


def test_a_missing_table_is_appended_and_quotes_are_escaped() -> None:
    out = set_table_keys(DOC, "core.providers.custom", {"api_key": toml_secret("file", 'a"b')})
    assert out.startswith(DOC.rstrip("\n"))
    assert tomllib.loads(out)["core"]["providers"]["custom"]["api_key"] == {"file": 'a"b'}
    assert set_table_keys("", "core", {"default_provider": toml_string("x")}) == (
        '[core]\ndefault_provider = "x"\n'
    )
    assert set_table_keys(DOC, "nothing", {"token": None}) == DOC
