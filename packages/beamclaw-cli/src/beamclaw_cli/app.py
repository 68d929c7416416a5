"""The ``beamclaw`` command.

Command groups live in ``beamclaw_cli.commands.<group>`` modules, each exposing
``register(app)``; :data:`COMMAND_MODULES` lists them, so a new group (``pair``,
``sandbox``, ``scheduler``) plugs in by adding one module name.

Exit codes: 0 success; 1 failure (the one-line error says why); 2 usage error.
Errors print as one line; ``--debug`` adds the traceback.
"""

from __future__ import annotations

import os
import sys
from importlib import import_module
from typing import Any

import typer

from beamclaw_cli.errors import UsageError
from beamclaw_cli.state import cli_state

COMMAND_MODULES: tuple[str, ...] = (
    "onboard",
    "serve",
    "daemon",
    "doctor",
    "config",
    "agent",
    "mcp",
    "version",
    "tui",
    "sessions",
    "approvals",
    "identity",
    "pair",
    "skills",
    "ui",
    "scheduler",
    "tasks",
    "sandbox",
    "integrations",
)

_APP_SETTINGS: dict[str, Any] = {
    "name": "beamclaw",
    "help": "BeamClaw: a fault-tolerant personal AI agent gateway and MCP host.",
    "no_args_is_help": False,
    "pretty_exceptions_enable": False,
    "rich_markup_mode": None,
}

app = typer.Typer(**_APP_SETTINGS)


@app.callback(invoke_without_command=True)
def _root(
    ctx: typer.Context,
    debug: bool = typer.Option(False, "--debug", help="Show tracebacks on errors."),
) -> None:
    """Without a command: the TUI on a terminal, this help otherwise."""
    cli_state.debug = debug
    if ctx.invoked_subcommand is not None:
        return
    from beamclaw_cli.commands.tui import launch, needs_terminal

    if needs_terminal():
        typer.echo(ctx.get_help())
        return
    launch()


for _name in COMMAND_MODULES:
    import_module(f"beamclaw_cli.commands.{_name}").register(app)


def is_beamclaw_error(exc: BaseException) -> bool:
    """True for any package's ``Beamclaw<X>Error`` (checked by name: no heavy imports)."""
    return any(
        cls.__module__.startswith("beamclaw_")
        and cls.__name__.startswith("Beamclaw")
        and cls.__name__.endswith("Error")
        for cls in type(exc).__mro__
    )


_ROOT_FLAGS = frozenset({"--debug"})
"""The root's options that take no value: a command may follow them."""


def app_for(argv: list[str]) -> typer.Typer:
    """The app that runs ``argv``: the whole :data:`app`, or — when ``argv`` names one
    registered command or group, after none but :data:`_ROOT_FLAGS` — an app with the same
    root and only that command.

    typer turns every registered command into a click command before it parses anything
    (≈ 80 ms for the sixty here, on each run); the one a command line names is all it
    needs. Invariant: what the narrowed app prints, exits with and runs is what the whole
    app would (the command's usage line, help and errors are the command's own). The whole
    app runs whatever needs the others: the root's help, an unknown or mistyped command
    (its suggestions), another root option, shell completion.
    """
    if any(key.endswith("_COMPLETE") for key in os.environ):
        return app
    name = next((arg for arg in argv if arg not in _ROOT_FLAGS), None)
    if name is None or name.startswith("-"):
        return app
    commands = [c for c in app.registered_commands if c.name == name]
    groups = [g for g in app.registered_groups if g.name == name]
    if len(commands) + len(groups) != 1:
        return app
    narrowed = typer.Typer(**_APP_SETTINGS)
    narrowed.registered_callback = app.registered_callback
    narrowed.registered_commands = commands
    narrowed.registered_groups = groups
    return narrowed


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``beamclaw`` script. Returns the exit code."""
    args = sys.argv[1:] if argv is None else argv
    try:
        result = app_for(args)(args=args, standalone_mode=False)
        if isinstance(result, int):  # click returns typer.Exit codes in this mode
            return result
    except KeyboardInterrupt:
        return 130
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except typer.Exit as exc:
        return exc.exit_code
    except typer.Abort:
        print("aborted", file=sys.stderr)
        return 1
    except typer.TyperException as exc:  # click-style usage errors: bad command, option, value
        show = getattr(exc, "show", None)
        if callable(show):
            show()
        else:
            print(f"error: {exc}", file=sys.stderr)
        return exc.exit_code
    except Exception as exc:
        if cli_state.debug:
            import traceback

            traceback.print_exc()
        if isinstance(exc, UsageError):
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if is_beamclaw_error(exc):
            print(f"error: {exc}", file=sys.stderr)
            return 1
        print(
            f"error: unexpected {type(exc).__name__}: {exc} (run with --debug for details)",
            file=sys.stderr,
        )
        return 1
    return 0


def run() -> None:
    """Console-script shim: exit with :func:`main`'s code."""
    sys.exit(main())
