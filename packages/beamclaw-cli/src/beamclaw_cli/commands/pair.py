"""``beamclaw pair telegram CODE|list|revoke``: who may talk to the Telegram bot.

With ``dm_policy = "pairing"`` a stranger who writes to the bot gets an 8-character code;
``beamclaw pair telegram CODE`` lets that Telegram user in (``--person`` links the account
``tg:<user id>`` to a person, one history across channels; ``--agent`` fixes the agent
that answers them). Through the running gateway (``/api/pairing/telegram``) when one holds
the home, so the bot tells the user at once; straight on the database otherwise (the user
is let in from the gateway's next start).
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
    from beamclaw_gateway.telegram import PairingStore
    from beamclaw_memory import Database

T = TypeVar("T")

_CONFIG = typer.Option(None, "--config", "-c", help="Config file.", exists=True, dir_okay=False)


def _gateway_pid() -> int | None:
    from beamclaw_cli.daemon import running_pid
    from beamclaw_obs import beamclaw_home

    return running_pid(beamclaw_home())


def _via_gateway(config: Path | None, method: str, path: str, pid: int, body: Any = None) -> Any:
    response = gateway_request(config, method, path, pid, body)
    if response.status_code != 200:
        raise BeamclawCliError(response.json().get("error", {}).get("message", response.text))
    return response.json()


def _on_database(
    config: Path | None, action: Callable[[PairingStore, Database], Awaitable[T]]
) -> T:
    async def on(database: Database) -> T:
        import time

        from beamclaw_gateway.telegram import PairingStore

        store = PairingStore(database, time.time)
        await store.load()
        return await action(store, database)

    return with_database(config, on)


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        help="Let people talk to the bot: approve pairing codes (Telegram).",
        no_args_is_help=True,
    )
    app.add_typer(group, name="pair")

    @group.command("telegram")
    def telegram(
        code: str = typer.Argument(..., help="The code the bot gave the person."),
        person: str | None = typer.Option(
            None, "--person", "-p", help="Link the Telegram account to this person."
        ),
        agent: str | None = typer.Option(None, "--agent", "-a", help="Agent answering them."),
        config: Path | None = _CONFIG,
    ) -> None:
        """Approve a Telegram pairing code."""
        pid = _gateway_pid()
        if pid is not None:
            body = {"code": code, "person": person, "agent": agent}
            made: dict[str, Any] = _via_gateway(config, "POST", "/api/pairing/telegram", pid, body)
            who = f"@{made['username']}" if made.get("username") else str(made["user_id"])
            print(f"approved Telegram user {who}" + (f" as {person}" if person else ""))
            return

        async def action(store: PairingStore, database: Database) -> str:
            import time

            from beamclaw_core import Identities, IdentityError
            from beamclaw_gateway.telegram import UnknownPairingCodeError

            try:
                request, _user = await store.approve(code, person, agent)
            except UnknownPairingCodeError as exc:
                raise BeamclawCliError(str(exc)) from exc
            if person:
                identities = Identities(database, time.time)
                await identities.load()
                try:
                    await identities.link(f"tg:{request.user_id}", person)
                except IdentityError as exc:
                    raise BeamclawCliError(str(exc)) from exc
            return f"@{request.username}" if request.username else str(request.user_id)

        who = _on_database(config, action)
        print(f"approved Telegram user {who}" + (f" as {person}" if person else ""))

    @group.command("list")
    def list_(
        config: Path | None = _CONFIG,
        as_json: bool = typer.Option(False, "--json", help="Machine-readable output."),
    ) -> None:
        """Pending codes and approved Telegram users."""
        pid = _gateway_pid()
        if pid is not None:
            found: dict[str, Any] = _via_gateway(config, "GET", "/api/pairing/telegram", pid)
        else:

            async def action(store: PairingStore, _db: Database) -> dict[str, Any]:
                from dataclasses import asdict

                return {
                    "pending": [asdict(p) for p in await store.pending()],
                    "approved": [asdict(u) for u in store.approved_users()],
                }

            found = _on_database(config, action)
        if as_json:
            print(json.dumps(found, indent=2))
            return
        pending, approved = found["pending"], found["approved"]
        if not pending and not approved:
            print("no pending codes and no approved Telegram users")
            return
        for p in pending:
            who = f"@{p['username']}" if p.get("username") else str(p["user_id"])
            print(f"pending   {p['code']}  {who:<24} until {local_time(p['expires_at'])}")
        for u in approved:
            who = f"@{u['username']}" if u.get("username") else str(u["user_id"])
            extra = "".join(f" {k}={u[k]}" for k in ("person", "agent") if u.get(k) is not None)
            print(f"approved  {u['user_id']:<10} {who:<24}{extra}")

    @group.command("revoke")
    def revoke(
        who: str = typer.Argument(..., help="Telegram user id, @username or pending code."),
        config: Path | None = _CONFIG,
    ) -> None:
        """Stop answering a Telegram user (or drop a pending code)."""
        pid = _gateway_pid()
        if pid is not None:
            path = f"/api/pairing/telegram/{quote(who, safe='')}"
            removed = str(_via_gateway(config, "DELETE", path, pid)["removed"])
        else:

            async def action(store: PairingStore, _db: Database) -> str:
                from beamclaw_gateway.telegram import NotApprovedError

                try:
                    return await store.revoke(who)
                except NotApprovedError as exc:
                    raise BeamclawCliError(str(exc)) from exc

            removed = _on_database(config, action)
        print(f"revoked {who} ({removed})")
