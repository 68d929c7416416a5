"""The ``beamclaw`` command.

Command groups live in ``beamclaw_cli.commands.<group>`` modules, each exposing
``register(app)``; :data:`COMMAND_MODULES` lists them, so a new group (``pair``,
``sandbox``, ``scheduler``) plugs in by adding one module name.

Exit codes: 0 success; 1 failure (the one-line error says why); 2 usage error.
Errors print as one line; ``--debug`` adds the traceback.
"""

from __future__ import annotations

import sys
from importlib import import_module

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

app = typer.Typer(
    name="beamclaw",
    help="BeamClaw: a fault-tolerant personal AI agent gateway and MCP host.",
    no_args_is_help=False,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
)


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


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``beamclaw`` script. Returns the exit code."""
    try:
        result = app(args=argv, standalone_mode=False)
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
