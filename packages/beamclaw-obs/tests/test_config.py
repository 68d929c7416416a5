"""Configuration: lookup order, env overrides with __ nesting, errors, unknown keys, secrets."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import Field

from beamclaw_obs import (
    BeamclawSettingsBase,
    ConfigError,
    MissingSecretError,
    Secret,
    Section,
    find_config_file,
    load_settings,
    scrub,
)
from beamclaw_obs.scrub import forget_secrets


class Inner(Section):
    depth: int = 1
    key: Secret | None = None


class Alpha(Section):
    name: str = "a"
    count: int = 3
    inner: Inner = Field(default_factory=Inner)
    servers: list[Inner] = Field(default_factory=list)
    named: dict[str, Inner] = Field(default_factory=dict)


class Root(BeamclawSettingsBase):
    alpha: Alpha = Field(default_factory=Alpha)


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    return path


def test_defaults_when_no_file(beamclaw_home: Path) -> None:
    loaded = load_settings(Root)
    assert loaded.source == "packaged defaults"
    assert loaded.path is None
    assert loaded.settings.alpha.count == 3


def test_home_file_then_explicit_file_win(
    beamclaw_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home_file = write(beamclaw_home / "beamclaw.toml", "[alpha]\ncount = 5\n")
    assert find_config_file() == home_file
    assert load_settings(Root).settings.alpha.count == 5
    explicit = write(tmp_path / "other.toml", "[alpha]\ncount = 7\n")
    monkeypatch.setenv("BEAMCLAW_CONFIG", str(explicit))
    loaded = load_settings(Root)
    assert loaded.settings.alpha.count == 7
    assert loaded.source == str(explicit)


def test_missing_explicit_file_is_an_error(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("BEAMCLAW_CONFIG", str(tmp_path / "nope.toml"))
    with pytest.raises(ConfigError, match="does not exist"):
        load_settings(Root)


def test_env_overrides_file_with_nesting(
    beamclaw_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(
        beamclaw_home / "beamclaw.toml",
        "[alpha]\ncount = 5\nname = 'file'\n[alpha.inner]\ndepth = 2\n",
    )
    monkeypatch.setenv("BEAMCLAW_ALPHA__COUNT", "9")
    monkeypatch.setenv("BEAMCLAW_ALPHA__INNER__DEPTH", "4")
    s = load_settings(Root).settings
    assert (s.alpha.count, s.alpha.inner.depth, s.alpha.name) == (9, 4, "file")


def test_malformed_toml_names_file_and_position(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.toml", "[alpha\ncount = 5\n")
    with pytest.raises(ConfigError) as err:
        load_settings(Root, bad)
    assert str(bad) in str(err.value)
    assert "malformed TOML" in str(err.value)
    assert "line 1" in str(err.value)


def test_wrong_type_names_key_and_reason(tmp_path: Path) -> None:
    bad = write(tmp_path / "bad.toml", "[alpha]\ncount = 'many'\n")
    with pytest.raises(ConfigError) as err:
        load_settings(Root, bad)
    assert err.value.source == str(bad)
    assert any(p.startswith("alpha.count:") for p in err.value.problems)
    assert "'many'" in str(err.value)


def test_unknown_keys_warn_not_crash(tmp_path: Path) -> None:
    f = write(
        tmp_path / "c.toml",
        "bogus = 1\n[alpha]\ncount = 2\ntypo_key = 1\n[alpha.inner]\ndeep_typo = 2\n"
        "[[alpha.servers]]\ndepth = 3\nwhat = 1\n[alpha.named.x]\nzzz = 1\n",
    )
    loaded = load_settings(Root, f)
    assert loaded.settings.alpha.count == 2
    joined = " ".join(loaded.warnings)
    for key in (
        "'bogus'",
        "'alpha.typo_key'",
        "'alpha.inner.deep_typo'",
        "'alpha.servers[0].what'",
        "'alpha.named.x.zzz'",
    ):
        assert key in joined


def test_secret_resolved_at_use_and_registered_for_scrubbing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    forget_secrets()
    f = write(tmp_path / "c.toml", '[alpha.inner]\nkey = { env = "MY_TEST_KEY" }\n')
    s = load_settings(Root, f).settings  # loading never resolves: no crash while unset
    secret = s.alpha.inner.key
    assert secret is not None
    with pytest.raises(MissingSecretError, match="MY_TEST_KEY") as err:
        secret.resolve(used_for="the alpha provider")
    assert "alpha provider" in str(err.value)
    monkeypatch.setenv("MY_TEST_KEY", "value-abcdef-123456")
    assert secret.resolve() == "value-abcdef-123456"
    assert "value-abcdef-123456" not in scrub("the key is value-abcdef-123456 ok")
    assert "value-abcdef" not in repr(secret)
    assert secret.model_dump() == {"env": "MY_TEST_KEY"}
    forget_secrets()


def test_literal_secret_is_masked() -> None:
    s = Secret.model_validate("literal-secret-value")
    assert s.describe() == "literal"
    assert "literal-secret-value" not in repr(s)
    assert s.model_dump() == "********"
    assert s.resolve() == "literal-secret-value"


def test_bad_secret_shape_is_a_config_error(tmp_path: Path) -> None:
    f = write(tmp_path / "c.toml", '[alpha.inner]\nkey = { variable = "X" }\n')
    with pytest.raises(ConfigError, match=r"alpha\.inner\.key"):
        load_settings(Root, f)


class _Renamed(Section):
    kept: int = 1
    replaced_keys = {"old_size": "replaced by kept"}


class _RenamedRoot(BeamclawSettingsBase):
    sec: _Renamed = Field(default_factory=_Renamed)


def test_a_removed_key_warns_with_what_replaced_it(tmp_path: Path) -> None:
    f = write(tmp_path / "c.toml", "[sec]\nold_size = 80\nother = 1\n")
    warnings = load_settings(_RenamedRoot, f).warnings
    assert warnings == [
        f"{f}: unknown key 'sec.old_size' ignored (replaced by kept)",
        f"{f}: unknown key 'sec.other' ignored",
    ]
