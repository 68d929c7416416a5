"""``beamclaw onboard``: the real command, the real config loader, a fake provider over HTTP."""

from __future__ import annotations

import stat
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from beamclaw_cli.app import app, main
from beamclaw_core.testing import FakeReply, HttpFault
from beamclaw_core.workspace import build_system_prompt
from beamclaw_gateway import load_config

from .conftest import free_port
from .tui_support import ThreadedFakeLLM

KEY = "sk-onboard-test-0123456789abcdef"


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def _onboard(*args: str, input: str | None = None) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["onboard", *args], input=input)
    if result.exception is not None and not isinstance(result.exception, SystemExit):
        raise result.exception
    return result.exit_code, result.output


def test_non_interactive_setup_stores_the_key_outside_the_config_and_tests_the_model(
    beamclaw_home: Path,
) -> None:
    with ThreadedFakeLLM([FakeReply("Hello from the fake model!")]) as llm:
        code, out = _onboard(
            "--non-interactive",
            "--provider",
            "custom",
            "--base-url",
            llm.base_url,
            "--model",
            "fake-1",
            "--api-key",
            KEY,
            "--agent-name",
            "Ada",
            "--personality",
            "Dry humour; answers in one short paragraph.",
            "--gateway-token",
        )
        assert llm.server is not None
        request = llm.server.requests[0]
    assert code == 0, out
    assert "the model answered: Hello from the fake model!" in out
    assert KEY not in out
    assert request.headers["authorization"] == f"Bearer {KEY}"
    assert request.body["model"] == "fake-1"

    config = (beamclaw_home / "beamclaw.toml").read_text()
    assert KEY not in config
    assert 'default_provider = "custom"' in config
    assert 'api_key = { file = "secrets/custom_api_key" }' in config
    assert 'token = { file = "secrets/gateway_token" }' in config
    key_file = beamclaw_home / "secrets" / "custom_api_key"
    token_file = beamclaw_home / "secrets" / "gateway_token"
    assert key_file.read_text().strip() == KEY
    assert _mode(key_file) == 0o600 and _mode(token_file) == 0o600
    assert _mode(beamclaw_home / "secrets") == 0o700
    assert len(token_file.read_text().strip()) >= 40
    assert token_file.read_text().strip() not in config

    settings = load_config().settings
    assert settings.core.providers["custom"].api_key is not None
    assert settings.core.providers["custom"].api_key.resolve() == KEY
    assert settings.gateway.http.token is not None and settings.gateway.http.token.is_available()

    prompt = build_system_prompt("default", now=datetime.now(UTC), last_message_at=None).text
    assert "- **Name:** Ada" in prompt
    assert "I am Ada," in prompt
    assert "## Personality\nDry humour; answers in one short paragraph." in prompt


def test_a_rerun_changes_only_what_was_chosen(beamclaw_home: Path) -> None:
    beamclaw_home.mkdir(parents=True)
    mine = (
        "# my own notes stay\n"
        "[gateway.http]\nport = 19999  # chosen by me\n\n"
        "[core.agentic_loop]\nmax_tool_iterations = 4\n"
    )
    (beamclaw_home / "beamclaw.toml").write_text(mine)
    url = f"http://127.0.0.1:{free_port()}/v1"
    code, out = _onboard(
        "--non-interactive", "--provider", "local", "--base-url", url, "--skip-test"
    )
    assert code == 0, out
    first = (beamclaw_home / "beamclaw.toml").read_text()
    assert first.startswith(mine)
    assert "api_key" not in first  # a local server needs no key
    loaded = load_config().settings
    assert loaded.gateway.http.port == 19999
    assert loaded.core.agentic_loop.max_tool_iterations == 4
    assert loaded.core.default_provider == "local"
    assert loaded.core.providers["local"].base_url == url

    code, out = _onboard(
        "--non-interactive", "--provider", "local", "--model", "qwen3", "--skip-test"
    )
    assert code == 0, out
    second = (beamclaw_home / "beamclaw.toml").read_text()
    changed = [
        (a, b) for a, b in zip(first.splitlines(), second.splitlines(), strict=True) if a != b
    ]
    assert changed == [('model = "llama3.1"', 'model = "qwen3"')]


def test_missing_required_choices_exit_2(
    beamclaw_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["onboard", "--non-interactive"]) == 2
    assert "--provider is required" in capsys.readouterr().err
    assert main(["onboard", "--non-interactive", "--provider", "openai", "--skip-test"]) == 2
    err = capsys.readouterr().err
    assert "needs a key: give --api-key or --api-key-env" in err
    assert main(["onboard", "--non-interactive", "--provider", "custom", "--skip-test"]) == 2
    assert "--base-url is required" in capsys.readouterr().err
    assert not (beamclaw_home / "beamclaw.toml").exists()


def test_the_key_can_stay_in_a_variable(beamclaw_home: Path) -> None:
    code, out = _onboard(
        "--non-interactive", "--provider", "openai", "--api-key-env", "MY_OPENAI_KEY", "--skip-test"
    )
    assert code == 0, out
    config = (beamclaw_home / "beamclaw.toml").read_text()
    assert 'api_key = { env = "MY_OPENAI_KEY" }' in config
    assert not (beamclaw_home / "secrets").exists()


def test_a_refused_key_and_an_unreachable_url_say_what_to_fix(
    beamclaw_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with ThreadedFakeLLM(
        [HttpFault(401, {"error": {"type": "invalid_api_key", "message": "bad key"}})]
    ) as llm:
        code = main(
            ["onboard", "--non-interactive", "--provider", "custom", "--base-url", llm.base_url,
             "--api-key", KEY]
        )  # fmt: skip
    captured = capsys.readouterr()
    assert code == 1
    assert "error: the provider refused the key (HTTP 401)" in captured.err
    assert KEY not in captured.out + captured.err
    dead = f"http://127.0.0.1:{free_port()}/v1"
    code = main(["onboard", "--non-interactive", "--provider", "local", "--base-url", dead])
    err = capsys.readouterr().err
    assert code == 1
    assert f"error: cannot reach {dead}" in err and "is the server running" in err


def test_interactive_setup_through_the_terminal_prompts(beamclaw_home: Path) -> None:
    with ThreadedFakeLLM([FakeReply("Hi, I am Bo.")]) as llm:
        answers = "\n".join(["5", llm.base_url, "fake-2", KEY, "Bo", "Warm and curious.", "n"])
        code, out = _onboard(input=answers + "\n")
    assert code == 0, out
    assert "Which LLM provider?" in out and "5. custom" in out
    assert "the model answered: Hi, I am Bo." in out
    assert KEY not in out  # hidden input, never echoed
    config = (beamclaw_home / "beamclaw.toml").read_text()
    assert KEY not in config and 'model = "fake-2"' in config
    assert "token" not in config
    soul = (beamclaw_home / "agents" / "default" / "SOUL.md").read_text()
    assert "## Personality\nWarm and curious." in soul

    # Enter everywhere keeps every choice, the stored key included (--skip-test: no server)
    code, out = _onboard("--skip-test", input="\n" * 7)
    assert code == 0, out
    assert (beamclaw_home / "beamclaw.toml").read_text() == config
    assert (beamclaw_home / "secrets" / "custom_api_key").read_text().strip() == KEY
    assert (beamclaw_home / "agents" / "default" / "SOUL.md").read_text() == soul


def test_a_file_it_cannot_edit_safely_is_left_unchanged(
    beamclaw_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    beamclaw_home.mkdir(parents=True)
    text = '[core]\nproviders.local.model = "dotted"\n'
    (beamclaw_home / "beamclaw.toml").write_text(text)
    code = main(["onboard", "--non-interactive", "--provider", "local", "--skip-test"])
    assert code == 1
    err = capsys.readouterr().err
    assert "the file was left unchanged" in err
    assert (beamclaw_home / "beamclaw.toml").read_text() == text
    assert not list(beamclaw_home.glob(".beamclaw.toml.onboard-*"))


def test_an_existing_usable_gateway_token_is_kept(
    beamclaw_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    beamclaw_home.mkdir(parents=True)
    (beamclaw_home / "beamclaw.toml").write_text(
        '[gateway.http]\ntoken = { env = "BEAMCLAW_GATEWAY_TOKEN" }\n'
    )
    monkeypatch.setenv("BEAMCLAW_GATEWAY_TOKEN", "an-operator-managed-token-123")
    code, out = _onboard(
        "--non-interactive", "--provider", "local", "--gateway-token", "--skip-test"
    )
    assert code == 0, out
    assert "gateway token: kept (env:BEAMCLAW_GATEWAY_TOKEN)" in out
    config = (beamclaw_home / "beamclaw.toml").read_text()
    assert 'token = { env = "BEAMCLAW_GATEWAY_TOKEN" }' in config
    assert not (beamclaw_home / "secrets" / "gateway_token").exists()
    code, out = _onboard(
        "--non-interactive", "--provider", "local", "--no-gateway-token", "--skip-test"
    )
    assert code == 0, out
    assert "token" not in (beamclaw_home / "beamclaw.toml").read_text()
