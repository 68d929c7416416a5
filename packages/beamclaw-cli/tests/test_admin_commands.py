"""doctor, config show/check and agent commands through the real entry point."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import Run


def _write_config(home: Path, text: str) -> None:
    home.mkdir(parents=True, exist_ok=True)
    (home / "beamclaw.toml").write_text(text)


def test_doctor_fails_on_missing_key_and_names_it(run_cli: Run) -> None:
    r = run_cli("doctor", "--offline")
    assert r.returncode == 1
    assert "[fail] llm provider:" in r.stdout
    assert "OPENROUTER_API_KEY is not set" in r.stdout
    assert "[ok] bind: 127.0.0.1:18800 (loopback only)" in r.stdout
    assert "[warn] auth:" in r.stdout


def test_doctor_passes_with_a_keyless_local_provider(run_cli: Run, beamclaw_home: Path) -> None:
    _write_config(
        beamclaw_home,
        '[core]\ndefault_provider = "local"\n'
        '[core.providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "m"\n',
    )
    r = run_cli("doctor", "--offline", "--json")
    checks = json.loads(r.stdout)
    assert r.returncode == 0, r.stdout
    assert all(c["level"] != "fail" for c in checks)
    assert any(c["name"] == "database" for c in checks)


def test_doctor_reports_unreachable_endpoint(run_cli: Run, beamclaw_home: Path) -> None:
    _write_config(
        beamclaw_home,
        '[core]\ndefault_provider = "local"\n'
        '[core.providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'model = "m"\n',
    )
    r = run_cli("doctor", "--timeout", "1")
    assert r.returncode == 1
    assert "[fail] provider local: http://127.0.0.1:9/v1 unreachable" in r.stdout


def test_doctor_with_broken_config(run_cli: Run, beamclaw_home: Path) -> None:
    _write_config(beamclaw_home, "[core\n")
    r = run_cli("doctor", "--offline")
    assert r.returncode == 1
    assert "[fail] config:" in r.stdout and "malformed TOML" in r.stdout


def test_doctor_exposure_audit_public_bind(run_cli: Run, beamclaw_home: Path) -> None:
    _write_config(
        beamclaw_home, '[gateway.http]\nhost = "0.0.0.0"\n[core]\nautonomy_level = "full"\n'
    )
    r = run_cli("doctor", "--offline")
    assert "[fail] bind: 0.0.0.0:18800 without a gateway token" in r.stdout
    assert "[warn] approvals: autonomy_level = full" in r.stdout


def test_config_show_masks_secrets(run_cli: Run, beamclaw_home: Path) -> None:
    _write_config(beamclaw_home, '[gateway.http]\ntoken = "literal-token-value-123"\n')
    r = run_cli("config", "show", env={"OPENROUTER_API_KEY": "sk-or-v1-abcdefabcdefabcdef"})
    assert r.returncode == 0, r.stderr
    assert "literal-token-value-123" not in r.stdout
    assert "sk-or-v1-abcdef" not in r.stdout
    assert 'token = "********"' in r.stdout
    assert 'env = "OPENROUTER_API_KEY"' in r.stdout
    data = json.loads(run_cli("config", "show", "--json").stdout)
    assert data["config"]["gateway"]["http"]["port"] == 18800


def test_config_check(run_cli: Run, beamclaw_home: Path) -> None:
    _write_config(beamclaw_home, "[gateway.http]\nport = 1\ntypo = 2\n")
    ok = run_cli("config", "check")
    assert ok.returncode == 0
    assert "unknown key 'gateway.http.typo'" in ok.stdout
    _write_config(beamclaw_home, "[gateway.http]\nport = 'x'\n")
    bad = run_cli("config", "check")
    assert bad.returncode == 1
    assert "gateway.http.port" in bad.stderr


def test_agent_lifecycle(run_cli: Run, beamclaw_home: Path) -> None:
    assert run_cli("agent", "create", "scout").returncode == 0
    assert (beamclaw_home / "agents" / "scout" / "SOUL.md").exists()
    dup = run_cli("agent", "create", "scout")
    assert dup.returncode == 1 and "error:" in dup.stderr
    bad = run_cli("agent", "create", "../evil")
    assert bad.returncode == 1
    listing = json.loads(run_cli("agent", "list", "--json").stdout)
    assert [a["name"] for a in listing] == ["default", "scout"]
    shown = json.loads(run_cli("agent", "show", "scout", "--json").stdout)
    assert "MEMORY.md" in shown["files"]
    skills = beamclaw_home / "agents" / "scout" / "skills" / "mine"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text("---\nname: mine\ndescription: x\n---\nbody\n")
    (beamclaw_home / "agents" / "scout" / "SOUL.md").write_text("changed")
    r = run_cli("agent", "rehatch", "scout")
    assert r.returncode == 0, r.stderr
    assert (skills / "SKILL.md").exists()
    assert (beamclaw_home / "agents" / "scout" / "SOUL.md").read_text() != "changed"
    protected = run_cli("agent", "delete", "default", "--yes")
    assert protected.returncode == 1 and "protected" in protected.stderr
    assert run_cli("agent", "delete", "scout", "--yes").returncode == 0
    assert not (beamclaw_home / "agents" / "scout").exists()
    missing = run_cli("agent", "show", "scout")
    assert missing.returncode == 1


def test_agent_list_on_a_fresh_home_shows_the_default_agent(
    run_cli: Run, beamclaw_home: Path
) -> None:
    listing = json.loads(run_cli("agent", "list", "--json").stdout)
    assert [a["name"] for a in listing] == ["default"]
    assert (beamclaw_home / "agents" / "default" / "SOUL.md").exists()
    text = run_cli("agent", "list")
    assert text.stdout.startswith("default ")


def test_doctor_reports_the_effective_rate_limits(run_cli: Run, beamclaw_home: Path) -> None:
    _write_config(beamclaw_home, '[gateway.rate_limit]\nper_ip = "7/second"\n')
    r = run_cli("doctor", "--offline")
    line = next(x for x in r.stdout.splitlines() if x.startswith("[ok] rate limits:"))
    assert "per_ip 7/second" in line
    assert "storage_uri memory://" in line
    _write_config(beamclaw_home, "[gateway.rate_limit]\nenabled = false\n")
    off = run_cli("doctor", "--offline")
    assert "[warn] rate limits: off ([gateway.rate_limit] enabled = false)" in off.stdout


def test_doctor_says_the_sandbox_is_off_by_default(run_cli: Run, beamclaw_home: Path) -> None:
    """Issue 21 built the sandbox: off by default, and doctor says so without touching
    Docker (enabled: packages/beamclaw-cli/tests/test_sandbox_cli.py)."""
    r = run_cli("doctor", "--offline")
    assert "[ok] sandbox: disabled (exec not offered; [sandbox] enabled = false)" in r.stdout
    assert "sandbox engine" not in r.stdout


AGENTS_CONFIG = (
    '[core]\ndefault_provider = "local"\n'
    '[core.providers.local]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\nmodel = "m"\n'
    '[core.providers.keyed]\nkind = "openai"\nbase_url = "http://127.0.0.1:9/v1"\n'
    'model = "big"\napi_key = { env = "BEAMCLAW_TEST_UNSET_KEY" }\n'
    '[agents.scout]\nmodel = "m-small"\nautonomy_level = "read_only"\n'
    '[agents.paid]\nprovider = "keyed"\n'
)


def test_agent_show_reports_the_agents_provider_model_and_autonomy(
    run_cli: Run, beamclaw_home: Path
) -> None:
    _write_config(beamclaw_home, AGENTS_CONFIG)
    assert run_cli("agent", "create", "scout").returncode == 0
    assert run_cli("agent", "create", "other").returncode == 0
    shown = json.loads(run_cli("agent", "show", "scout", "--json").stdout)
    assert (shown["provider"], shown["model"], shown["autonomy_level"]) == (
        "local",
        "m-small",
        "read_only",
    )
    other = run_cli("agent", "show", "other")
    assert "provider local, model m, autonomy supervised (the [core] defaults)" in other.stdout


def test_doctor_checks_each_agents_provider(run_cli: Run, beamclaw_home: Path) -> None:
    _write_config(beamclaw_home, AGENTS_CONFIG)
    r = run_cli("doctor", "--offline")
    assert r.returncode == 1, r.stdout
    assert "[ok] agent scout: provider local, model m-small, autonomy read_only" in r.stdout
    assert "[fail] agent paid: provider keyed, model big, autonomy supervised: key" in r.stdout
    _write_config(beamclaw_home, '[agents.scout]\nprovider = "nope"\n')
    bad = run_cli("doctor", "--offline")
    assert bad.returncode == 1
    assert "[fail] config:" in bad.stdout
    assert "agents.scout.provider = 'nope': no [core.providers.nope] section" in bad.stdout


def test_doctor_says_how_to_install_a_missing_chromium(
    run_cli: Run, beamclaw_home: Path, tmp_path: Path
) -> None:
    """Issue 25: without Chromium the browser tools are not offered, and doctor says how
    to get one; with one, it names the executable."""
    fake = tmp_path / "my-chromium"
    _write_config(beamclaw_home, f'[tools.browser]\nexecutable_path = "{tmp_path / "none"}"\n')
    r = run_cli("doctor", "--offline")
    assert "[warn] browser: Chromium not found" in r.stdout
    assert "apt-get install chromium" in r.stdout
    fake.write_text("#!/bin/sh\n")
    _write_config(beamclaw_home, f'[tools.browser]\nexecutable_path = "{fake}"\n')
    r = run_cli("doctor", "--offline")
    assert f"[ok] browser: Chromium at {fake}; browser_* tools offered" in r.stdout
