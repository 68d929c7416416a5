"""``beamclaw identity link|unlink|list``: one person across channels.

A channel account (``local:ann`` from the TUI, ``api:ann`` from ``X-User-Id: ann``,
``ws:ann``, ``tg:123``) linked to a person talks to that person's sessions, so the TUI,
the API and Telegram of one person share one history (``[core] session_sharing =
"shared"``). ``list`` reads the database directly; ``link`` and ``unlink`` go through the
running gateway (``/api/identities``) when one holds the home, so its sessions see the
change at once, and straight to the database otherwise.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import quote

import typer

from beamclaw_cli.errors import BeamclawCliError
from beamclaw_cli.home_access import gateway_request, with_database
from beamclaw_cli.output import local_time

if TYPE_CHECKING:
    from beamclaw_core import Identities, IdentityLink
    from beamclaw_memory import Database

T = TypeVar("T")

_CONFIG = typer.Option(None, "--config", "-c", help="Config file.", exists=True, dir_okay=False)


def _with_identities(config: Path | None, action: Callable[[Identities], Awaitable[T]]) -> T:
    async def on(database: Database) -> T:
        import time

        from beamclaw_core import Identities

        identities = Identities(database, time.time)
        await identities.load()
        return await action(identities)

    return with_database(config, on)


def _link_json(link: IdentityLink) -> dict[str, Any]:
    return {
        "account": link.account,
        "person": link.person_id,
        "session_key": link.session_key,
        "linked_at": link.linked_at,
    }


def _via_gateway(config: Path | None, method: str, path: str, pid: int, body: Any) -> Any:
    response = gateway_request(config, method, path, pid, body)
    if response.status_code != 200:
        raise BeamclawCliError(response.json().get("error", {}).get("message", response.text))
    return response.json()


def _change(
    config: Path | None,
    method: str,
    path: str,
    body: Any,
    local: Callable[[Identities], Awaitable[IdentityLink]],
) -> dict[str, Any]:
    """Through the gateway holding the home, else on the database directly."""
    from beamclaw_cli.daemon import running_pid
    from beamclaw_core import IdentityError
    from beamclaw_obs import beamclaw_home

    pid = running_pid(beamclaw_home())
    if pid is not None:
        found: dict[str, Any] = _via_gateway(config, method, path, pid, body)
        return found
    try:
        return _link_json(_with_identities(config, local))
    except IdentityError as exc:
        raise BeamclawCliError(str(exc)) from exc


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Link channel accounts to one person (one history across channels).",
        no_args_is_help=True,
    )
    app.add_typer(group, name="identity")

    @group.command("link")
    def link(
        account: str = typer.Argument(..., help="Channel account: api:ann, local:ann, tg:123…"),
        person: str = typer.Argument(..., help="The person it speaks for (created when new)."),
        config: Path | None = _CONFIG,
    ) -> None:
        """Link an account to a person: its messages go to the person's sessions."""

        async def local(identities: Identities) -> IdentityLink:
            return await identities.link(account, person)

        made = _change(
            config, "POST", "/api/identities", {"account": account, "person": person}, local
        )
        print(f"linked {made['account']} to {made['person']} (sessions of {made['session_key']})")

    @group.command("unlink")
    def unlink(
        account: str = typer.Argument(..., help="The linked account."),
        config: Path | None = _CONFIG,
    ) -> None:
        """The account speaks for itself again (the person keeps the history)."""

        async def local(identities: Identities) -> IdentityLink:
            return await identities.unlink(account)

        gone = _change(config, "DELETE", f"/api/identities/{quote(account, safe='')}", None, local)
        print(f"unlinked {gone['account']} from {gone['person']}")

    @group.command("list")
    def list_(
        config: Path | None = _CONFIG,
        as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        """Every linked account, by person."""

        async def action(identities: Identities) -> list[IdentityLink]:
            return await identities.list()

        links = _with_identities(config, action)
        if as_json:
            print(json.dumps([_link_json(link) for link in links], indent=2))
            return
        if not links:
            print("no linked accounts (every account is a person of its own)")
            return
        print(f"{'PERSON':<20} {'ACCOUNT':<28} {'SESSIONS OF':<24} LINKED")
        for link in links:
            print(
                f"{link.person_id:<20} {link.account:<28} {link.session_key:<24} "
                f"{local_time(link.linked_at)}"
            )
