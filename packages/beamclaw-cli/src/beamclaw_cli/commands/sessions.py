"""``beamclaw sessions list|show|export|delete``: conversations, straight from the database.

The database is opened directly (``[memory] database_url`` or
``$BEAMCLAW_HOME/beamclaw.db``), so listing, showing and exporting work whether or not a
daemon runs. ``delete`` goes through the running gateway's ``DELETE /api/sessions/{id}``
when one holds the home lock (it owns the live sessions: it stops the session's loop
before deleting), and straight to the database otherwise. A session may be named by a
unique prefix of its id.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import typer

from beamclaw_cli.errors import BeamclawCliError, UsageError
from beamclaw_cli.home_access import gateway_delete, with_database
from beamclaw_cli.output import local_time

if TYPE_CHECKING:
    from beamclaw_core.store import ConversationRecord, ConversationStore, StoredMessage
    from beamclaw_memory import Database

T = TypeVar("T")

_CONFIG = typer.Option(None, "--config", "-c", help="Config file.", exists=True, dir_okay=False)
_JSON = typer.Option(False, "--json", help="Machine-readable output.")


class SessionNotFoundError(BeamclawCliError):
    pass


def _with_store(config: Path | None, action: Callable[[ConversationStore], Awaitable[T]]) -> T:
    async def on(database: Database) -> T:
        from beamclaw_core.store import ConversationStore

        return await action(ConversationStore(database))

    return with_database(config, on)


async def _resolve(store: ConversationStore, ref: str) -> ConversationRecord:
    exact = await store.get(ref)
    if exact is not None:
        return exact
    matches = [r for r in await store.list(include_children=True) if r.id.startswith(ref)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise SessionNotFoundError(f"no session {ref!r} (see `beamclaw sessions list`)")
    raise UsageError(f"{ref!r} matches {len(matches)} sessions; give more of the id")


def record_json(record: ConversationRecord) -> dict[str, Any]:
    return {
        "id": record.id,
        "agent": record.agent_id,
        "user": record.user_id,
        "channel": record.channel,
        "parent": record.parent_id,
        "state": record.state.kind,
        "created_at": record.created_at,
        "last_activity_at": record.last_activity_at,
    }


def row_json(row: StoredMessage) -> dict[str, Any]:
    out: dict[str, Any] = {"seq": row.seq, "kind": row.kind, "created_at": row.created_at}
    if row.message is not None:
        out["message"] = row.message.model_dump(mode="json", exclude_defaults=True)
    else:
        out["data"] = row.data
    return out


def export_markdown(record: ConversationRecord, rows: list[StoredMessage]) -> str:
    """A readable transcript: one section per message, tool calls as JSON blocks."""
    lines = [
        f"# Session {record.id}",
        "",
        f"- agent: {record.agent_id}",
        f"- user: {record.user_id}",
        f"- channel: {record.channel or '-'}",
        f"- state: {record.state.kind}",
        f"- created: {local_time(record.created_at)}",
        f"- last activity: {local_time(record.last_activity_at)}",
        "",
    ]
    for row in rows:
        message = row.message
        if message is None:
            label = "summary" if row.kind == "summary" else row.kind
            lines += [f"## — {label} ({local_time(row.created_at)}) —", ""]
            summary = row.data.get("summary") or row.data.get("text")
            if isinstance(summary, str) and summary:
                lines += [summary, ""]
            continue
        role = message.role.value
        head = f"## {role}" + (f" · {message.name}" if message.name else "")
        lines += [f"{head} ({local_time(row.created_at)})", ""]
        if message.text:
            lines += [message.text, ""]
        for call in message.tool_calls:
            args = json.dumps(call.args, indent=2, ensure_ascii=False)
            lines += [f"Tool call `{call.name}` ({call.id}):", "", "```json", args, "```", ""]
    return "\n".join(lines).rstrip() + "\n"


def register(app: typer.Typer) -> None:
    group = typer.Typer(help="Inspect, export and delete conversations.", no_args_is_help=True)
    app.add_typer(group, name="sessions")

    @group.command("list")
    def list_(
        config: Path | None = _CONFIG,
        as_json: bool = _JSON,
        include_children: bool = typer.Option(False, "--all", help="Include sub-agent sessions."),
    ) -> None:
        """List sessions, most recently active first."""

        async def action(store: ConversationStore) -> list[ConversationRecord]:
            return await store.list(include_children=include_children)

        records = _with_store(config, action)
        if as_json:
            print(json.dumps([record_json(r) for r in records], indent=2))
            return
        if not records:
            print("no sessions yet")
            return
        print(f"{'SESSION':<41} {'AGENT':<12} {'CHANNEL':<9} {'STATE':<18} LAST ACTIVITY")
        for r in records:
            print(
                f"{r.id:<41} {r.agent_id:<12} {r.channel or '-':<9} {r.state.kind:<18} "
                f"{local_time(r.last_activity_at)}"
            )

    @group.command("show")
    def show(
        session: str = typer.Argument(..., help="Session id (or a unique prefix)."),
        config: Path | None = _CONFIG,
        as_json: bool = _JSON,
        limit: int = typer.Option(20, "--limit", "-n", help="Last N messages (0: all)."),
    ) -> None:
        """Show a session and its latest messages."""

        async def action(
            store: ConversationStore,
        ) -> tuple[ConversationRecord, list[StoredMessage], int]:
            record = await _resolve(store, session)
            rows = await store.messages(record.id)
            queued = len(await store.pending(record.id))
            return record, rows, queued

        record, rows, queued = _with_store(config, action)
        shown = rows[-limit:] if limit > 0 else rows
        if as_json:
            print(
                json.dumps(
                    {
                        **record_json(record),
                        "messages_total": len(rows),
                        "queued": queued,
                        "messages": [row_json(r) for r in shown],
                    },
                    indent=2,
                )
            )
            return
        print(f"session {record.id}")
        print(f"  agent {record.agent_id}, user {record.user_id}, channel {record.channel or '-'}")
        print(f"  state {record.state.kind}, {len(rows)} stored rows, {queued} queued")
        print(
            f"  created {local_time(record.created_at)}, active {local_time(record.last_activity_at)}"
        )
        if len(shown) < len(rows):
            print(f"  (last {len(shown)} of {len(rows)}; --limit 0 for all)")
        for row in shown:
            message = row.message
            if message is None:
                print(f"\n[{row.seq}] — {row.kind} marker —")
                continue
            print(
                f"\n[{row.seq}] {message.role.value}"
                + (f" ({message.name})" if message.name else "")
            )
            if message.text:
                print(message.text)
            for call in message.tool_calls:
                print(f"  → {call.name} {json.dumps(call.args, ensure_ascii=False)}")

    @group.command("export")
    def export(
        session: str = typer.Argument(..., help="Session id (or a unique prefix)."),
        config: Path | None = _CONFIG,
        fmt: str = typer.Option("json", "--format", "-f", help="json or markdown."),
        output: Path | None = typer.Option(
            None, "--output", "-o", help="Write to this file instead of stdout."
        ),
    ) -> None:
        """Export a whole session (every stored message and marker)."""
        if fmt not in ("json", "markdown", "md"):
            raise UsageError(f"--format must be json or markdown, not {fmt!r}")

        async def action(
            store: ConversationStore,
        ) -> tuple[ConversationRecord, list[StoredMessage]]:
            record = await _resolve(store, session)
            return record, await store.messages(record.id)

        record, rows = _with_store(config, action)
        if fmt == "json":
            text = (
                json.dumps(
                    {"session": record_json(record), "messages": [row_json(r) for r in rows]},
                    indent=2,
                    ensure_ascii=False,
                )
                + "\n"
            )
        else:
            text = export_markdown(record, rows)
        if output is None:
            print(text, end="")
            return
        output.write_text(text, encoding="utf-8")
        print(f"exported {record.id} ({len(rows)} rows) to {output}")

    @group.command("delete")
    def delete(
        session: str = typer.Argument(..., help="Session id (or a unique prefix)."),
        config: Path | None = _CONFIG,
        yes: bool = typer.Option(False, "--yes", "-y", help="Do not ask for confirmation."),
    ) -> None:
        """Delete a session with its history (refused while a gateway runs)."""
        from beamclaw_cli.daemon import running_pid
        from beamclaw_obs import beamclaw_home

        async def find(store: ConversationStore) -> ConversationRecord:
            return await _resolve(store, session)

        record = _with_store(config, find)
        if not yes:
            typer.confirm(f"Delete session {record.id} and all its messages?", abort=True)
        pid = running_pid(beamclaw_home())
        if pid is not None:
            _delete_via_gateway(config, record.id, pid)
        else:

            async def remove(store: ConversationStore) -> bool:
                return await store.delete(record.id)

            if not _with_store(config, remove):
                raise SessionNotFoundError(f"session {record.id} was already gone")
        print(f"deleted session {record.id}")


def _delete_via_gateway(config: Path | None, session_id: str, pid: int) -> None:
    """Ask the running gateway to delete the session (it owns the live lanes)."""
    response = gateway_delete(config, f"/api/sessions/{session_id}", pid)
    if response.status_code == 404:
        raise SessionNotFoundError(f"session {session_id} was already gone")
    if response.status_code != 200:
        raise BeamclawCliError(
            f"the gateway refused to delete {session_id}: HTTP {response.status_code} "
            f"{response.text[:200]}"
        )
