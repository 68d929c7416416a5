"""The narrowed app (``app_for``): a command line that names one command runs an app with
only that command, and prints, exits and fails exactly as the whole app does."""

from __future__ import annotations

import sys
from typing import Any

import pytest
import typer
from typer.testing import CliRunner

from beamclaw_cli.app import app, app_for, main

_COMMANDS = sorted(c.name for c in app.registered_commands if c.name)
_GROUPS = sorted(g.name for g in app.registered_groups if isinstance(g.name, str))


def _subcommands(group: str) -> list[str]:
    info = next(g for g in app.registered_groups if g.name == group)
    assert info.typer_instance is not None
    return sorted(c.name for c in info.typer_instance.registered_commands if c.name)


_CASES = [
    *([name, "--help"] for name in _COMMANDS),
    *([name, "--help"] for name in _GROUPS),
    *([group, sub, "--help"] for group in _GROUPS for sub in _subcommands(group)),
    ["--debug", "version", "--help"],
    ["version", "--json"],
    ["version", "--no-such-option"],
    ["agent", "no-such-subcommand"],
    ["agent"],
]


def _result(runner: typer.Typer, argv: list[str]) -> tuple[int, str, str]:
    r = CliRunner().invoke(runner, argv, prog_name="beamclaw")
    return r.exit_code, r.stdout, r.stderr


def test_the_cases_cover_every_command() -> None:
    assert len(_COMMANDS) >= 10 and len(_GROUPS) >= 10
    assert sum(len(_subcommands(g)) for g in _GROUPS) >= 30


@pytest.mark.parametrize("argv", _CASES, ids=" ".join)
def test_a_named_command_runs_alone_and_answers_as_the_whole_app(argv: list[str]) -> None:
    narrowed = app_for(argv)
    assert narrowed is not app
    assert len(narrowed.registered_commands) + len(narrowed.registered_groups) == 1
    assert _result(narrowed, argv) == _result(app, argv)


@pytest.mark.parametrize(
    "argv",
    [[], ["--help"], ["no-such-command"], ["agnet", "list"], ["--install-completion"]],
    ids=lambda a: " ".join(a) or "(none)",
)
def test_what_needs_the_others_runs_the_whole_app(argv: list[str]) -> None:
    assert app_for(argv) is app


def test_shell_completion_runs_the_whole_app(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_BEAMCLAW_COMPLETE", "complete_bash")
    assert app_for(["agent", "list"]) is app


def test_main_without_argv_runs_the_process_command_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setattr(sys, "argv", ["beamclaw", "version", "--json"])
    assert main() == 0
    assert '"beamclaw-cli"' in capsys.readouterr().out


def test_running_one_command_builds_only_that_command(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The cost the narrowing removes: typer converting each registered command to a click
    command (counted where typer does it)."""
    import typer.main

    built: list[str] = []
    convert = typer.main.get_command_from_info

    def counted(command_info: Any, **kwargs: Any) -> Any:
        built.append(str(command_info.name))
        return convert(command_info, **kwargs)

    monkeypatch.setattr(typer.main, "get_command_from_info", counted)
    assert main(["version"]) == 0
    assert built == ["version"]
    built.clear()
    assert main(["--help"]) == 0
    assert len(built) == len(_COMMANDS) + sum(len(_subcommands(g)) for g in _GROUPS)
    capsys.readouterr()
