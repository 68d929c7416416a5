"""``beamclaw onboard``: first-run setup, in the terminal or from flags.

Asks (or takes from flags) the provider, its URL and model, the key, the agent's name
and personality and whether the API needs a gateway token; writes them (see
:mod:`beamclaw_cli.onboard.setup`), then makes one real test call. Running it again
offers the current choices as defaults and changes only what is chosen.

``--non-interactive`` never prompts: a missing required choice (the provider; a key for
a provider that needs one; a URL for ``custom``) is a usage error (exit 2).
"""

from __future__ import annotations

import os

import typer

from beamclaw_cli.errors import UsageError


def register(app: typer.Typer) -> None:
    app.command("onboard")(onboard_command)


def onboard_command(
    non_interactive: bool = typer.Option(
        False, "--non-interactive", help="Never prompt; take every choice from flags."
    ),
    provider: str | None = typer.Option(
        None, "--provider", help="openrouter, openai, anthropic, local or custom."
    ),
    base_url: str | None = typer.Option(None, "--base-url", help="API root of the provider."),
    model: str | None = typer.Option(None, "--model", help="Model name."),
    api_key: str | None = typer.Option(
        None, "--api-key", help="Store this key in $BEAMCLAW_HOME/secrets (mode 0600)."
    ),
    api_key_env: str | None = typer.Option(
        None, "--api-key-env", help="Read the key from this environment variable instead."
    ),
    agent_name: str | None = typer.Option(None, "--agent-name", help="The agent's name."),
    personality: str | None = typer.Option(
        None, "--personality", help="A few sentences on how the agent should come across."
    ),
    gateway_token: bool | None = typer.Option(
        None,
        "--gateway-token/--no-gateway-token",
        help="Require a bearer token on the API (generated and stored), or remove it.",
    ),
    skip_test: bool = typer.Option(False, "--skip-test", help="Do not make the test call."),
) -> None:
    """Set up a provider, its key, the agent's name and personality (re-runnable)."""
    from beamclaw_cli.onboard.flow import Flags, gather
    from beamclaw_cli.onboard.probe import probe
    from beamclaw_cli.onboard.setup import apply
    from beamclaw_gateway import load_config

    if api_key is not None and api_key_env is not None:
        raise UsageError("give --api-key or --api-key-env, not both")
    current = load_config().settings
    flags = Flags(
        provider, base_url, model, api_key, api_key_env, agent_name, personality, gateway_token
    )
    choices = gather(flags, current, interactive=not non_interactive, environ=os.environ)
    applied = apply(choices, current)
    name = choices.preset.name
    print(f"wrote {applied.config_path} (provider {name}, model {choices.model})")
    if applied.key_file is not None:
        print(f"stored the API key in {applied.key_file} (mode 0600; not in beamclaw.toml)")
    if applied.token_file is not None:
        print(
            f"gateway token in {applied.token_file}: clients send "
            f'"Authorization: Bearer $(cat {applied.token_file})"'
        )
    if applied.token_kept is not None:
        print(f"gateway token: kept ({applied.token_kept})")
    if choices.agent_name or choices.personality:
        print(f"agent {applied.loaded.settings.core.default_agent}: updated {applied.workspace}")
    if skip_test:
        print("test call skipped (--skip-test)")
        return
    settings = applied.loaded.settings.core.providers[name]
    print(f"test call to {name} ({settings.model} at {settings.base_url}) ...", flush=True)
    import asyncio

    answer = asyncio.run(probe(name, settings))
    print(f"the model answered: {answer}")
    print("done: `beamclaw` opens the TUI, `beamclaw serve` runs the gateway")
