"""Idempotency keys of dead gateways are settled; a live gateway's keys are left alone.

"Another gateway" is a second :class:`IdempotencyStore` on the same database with its
own instance id (and, for a dead one, a clock in the past so its lease has lapsed):
exactly the rows a gateway killed with ``kill -9`` mid-turn leaves behind.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa
from alembic.migration import MigrationContext
from alembic.operations import Operations

from beamclaw_core import Message, Usage
from beamclaw_core.api import Core
from beamclaw_core.committed import committed_turn
from beamclaw_core.sessions import SessionAddress
from beamclaw_core.testing import CallTool, Reply, ScriptedProvider
from beamclaw_gateway.idempotency import (
    DONE,
    Claim,
    IdempotencyStore,
    StoredAnswer,
    fingerprint,
    scoped_key,
    turn_ref,
)
from beamclaw_gateway.migrations.versions import gateway_0001_idempotency_a2a as gateway_0001
from beamclaw_gateway.tables import idempotency
from beamclaw_gateway.testing import quiet_config
from beamclaw_memory import Database, Unit
from beamclaw_tools import ToolCall

from .conftest import LiveGateway, live_gateway

HOUR = 3600.0


def _request(session: str, text: str = "hi") -> bytes:
    body = {"model": "beamclaw/default", "messages": [{"role": "user", "content": text}]}
    return json.dumps(body).encode()


async def _post(gw: LiveGateway, body: bytes, key: str, session: str) -> httpx.Response:
    async with httpx.AsyncClient(base_url=gw.base_url, timeout=10) as c:
        return await c.post(
            "/v1/chat/completions",
            content=body,
            headers={
                "content-type": "application/json",
                "Idempotency-Key": key,
                "X-Session-Id": session,
            },
        )


def _dead_gateway(db: Database) -> IdempotencyStore:
    """A gateway that claimed keys an hour ago and then died (its lease long lapsed)."""
    return IdempotencyStore(db, 86_400, instance="dead-gateway", clock=lambda: time.time() - HOUR)


async def _row(db: Database, key: str) -> Any:
    query = sa.select(idempotency).where(idempotency.c.key == key)
    return await db.read(lambda unit: unit.execute(query).one_or_none())


async def test_a_dead_gateways_key_is_replayed_at_restart_when_its_turn_committed(
    beamclaw_home: Path,
) -> None:
    body = _request("s-committed")
    key = scoped_key(None, "key-committed")
    async with live_gateway(ScriptedProvider([Reply("the committed answer")])) as gw:
        async with httpx.AsyncClient(base_url=gw.base_url) as c:
            original = await c.post(
                "/v1/chat/completions",
                content=body,
                headers={"content-type": "application/json", "X-Session-Id": "s-committed"},
            )
        turn_id = original.json()["id"].removeprefix("chatcmpl-")
        assert gw.runtime.database is not None
        dead = _dead_gateway(gw.runtime.database)
        claim = await dead.claim(
            key, fingerprint(body), session_id="s-committed", model="beamclaw/default"
        )
        assert claim.kind == "new"
        await dead.started(key, turn_id)
        await dead.close()  # killed before it stored the answer

    again = ScriptedProvider([Reply("must not run")])
    async with live_gateway(again) as gw2:
        assert gw2.runtime.database is not None
        swept = await _row(gw2.runtime.database, key)
        retry = await _post(gw2, body, "key-committed", "s-committed")
    assert swept.state == DONE  # settled by the start-up sweep, before any retry
    assert retry.status_code == 200, retry.text
    assert retry.headers["idempotent-replayed"] == "true"
    answer = retry.json()
    assert answer["object"] == "chat.completion"
    assert answer["id"] == original.json()["id"]
    assert answer["choices"][0]["message"]["content"] == "the committed answer"
    assert answer["choices"][0]["finish_reason"] == "stop"
    assert again.calls == []


async def test_a_dead_gateways_key_is_released_at_claim_when_its_turn_never_committed() -> None:
    body = _request("s-lost")
    provider = ScriptedProvider([Reply("a fresh answer"), Reply("must not run")])
    async with live_gateway(provider) as gw:
        assert gw.runtime.database is not None
        dead = _dead_gateway(gw.runtime.database)
        await dead.claim(
            key := scoped_key(None, "key-lost"), fingerprint(body), session_id="s-lost"
        )
        await dead.started(key, "a-turn-that-never-committed")
        await dead.close()
        retry = await _post(gw, body, "key-lost", "s-lost")
        replay = await _post(gw, body, "key-lost", "s-lost")
    assert retry.status_code == 200, retry.text
    assert "idempotent-replayed" not in retry.headers
    assert retry.json()["choices"][0]["message"]["content"] == "a fresh answer"
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json() == retry.json()
    assert len(provider.calls) == 1


async def test_a_live_gateways_running_key_still_answers_409_then_replays() -> None:
    body = _request("s-live")
    async with live_gateway(ScriptedProvider([Reply("must not run")])) as gw:
        assert gw.runtime.database is not None
        other = IdempotencyStore(gw.runtime.database, 86_400, instance="other-node")
        key = scoped_key(None, "key-live")
        await other.claim(key, fingerprint(body), session_id="s-live")
        busy = await _post(gw, body, "key-live", "s-live")
        answer = StoredAnswer(200, {"id": "chatcmpl-x", "object": "chat.completion"})
        await other.finish(key, answer, "s-live")
        await other.close()
        done = await _post(gw, body, "key-live", "s-live")
    assert busy.status_code == 409
    assert busy.json()["error"]["code"] == "idempotency_in_progress"
    assert done.headers["idempotent-replayed"] == "true"
    assert done.json() == answer.body


async def _approve_next(core: Core, session: str) -> None:
    """Answer (no) the next tool approval the session waits for."""
    for _ in range(500):
        pending = await core.pending_approvals(session)
        if pending:
            assert await core.answer_approval(session, pending[0].request_id, "no")
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no approval came")


async def _waiting_for_approval(core: Core, session: str) -> None:
    for _ in range(500):
        if await core.pending_approvals(session):
            return
        await asyncio.sleep(0.01)
    raise AssertionError("no approval came")


async def test_a_dead_gateways_queued_then_running_turn_keeps_its_key_busy_then_replays() -> None:
    """A restart resumes queued messages: releasing their keys would run them twice."""
    lease = 0.2
    config = quiet_config()
    config.gateway.api.idempotency_lease_seconds = lease
    write = CallTool("write_file", {"path": "x.txt", "content": "hi"})
    provider = ScriptedProvider([write, Reply("first done"), write, Reply("queued done")])
    session, key = "s-queued", scoped_key(None, "key-queued")
    body = _request(session, "the queued one")
    address = SessionAddress("api:anonymous", "default", "api")
    async with live_gateway(provider, config) as gw:
        core = gw.runtime.core
        assert gw.runtime.database is not None
        await core.send(address, "keep the session busy", session_id=session)
        await _waiting_for_approval(core, session)
        dead = _dead_gateway(gw.runtime.database)
        await dead.claim(key, fingerprint(body), session_id=session, model="beamclaw/default")
        queued = await core.send(
            address, "the queued one", session_id=session, source_message_id=turn_ref(key)
        )
        await dead.started(key, queued.turn_id)
        await dead.close()
        while_queued = await _post(gw, body, "key-queued", session)
        await _approve_next(core, session)  # the first turn ends; the queued one starts
        await _waiting_for_approval(core, session)
        await asyncio.sleep(lease * 1.5)
        while_running = await _post(gw, body, "key-queued", session)
        await _approve_next(core, session)
        await core.wait_idle(session)
        await asyncio.sleep(lease * 1.5)
        settled = await _post(gw, body, "key-queued", session)
    for busy in (while_queued, while_running):
        assert busy.status_code == 409, busy.text
        assert busy.json()["error"]["code"] == "idempotency_in_progress"
    assert settled.status_code == 200, settled.text
    assert settled.headers["idempotent-replayed"] == "true"
    assert settled.json()["choices"][0]["message"]["content"] == "queued done"
    assert settled.json()["id"] == f"chatcmpl-{queued.turn_id}"
    assert len(provider.calls) == 4


async def _database(url: str) -> Database:
    db = Database(url)
    await db.migrate()
    return db


async def test_a_refreshed_lease_keeps_a_key_its_owners_a_lapsed_one_is_taken_over(
    database_url: str,
) -> None:
    """Two gateway nodes on one database (SQLite, then PostgreSQL)."""
    now = [1_000_000.0]
    db = await _database(database_url)
    try:
        owner = IdempotencyStore(db, 86_400, lease_seconds=10, instance="a", clock=lambda: now[0])
        other = IdempotencyStore(db, 86_400, lease_seconds=10, instance="b", clock=lambda: now[0])
        assert (await owner.claim("k", "print")).kind == "new"
        now[0] += 8
        assert await owner.refresh_leases() == 1
        now[0] += 7  # 15 s after the claim, 7 s after the refresh
        assert (await other.claim("k", "print", wait=0)).kind == "busy"
        now[0] += 4  # the refreshed lease lapsed: "a" is dead
        assert (await other.claim("k", "print")).kind == "new"
        row = await _row(db, "k")
        assert (row.owner, row.lease_until) == ("b", now[0] + 10)
        await owner.close()
        await other.close()
    finally:
        await db.dispose()


async def test_a_running_request_keeps_its_lease_alive_past_the_lease_time(
    tmp_path: Path,
) -> None:
    db = await _database(f"sqlite:///{tmp_path}/beat.db")
    try:
        owner = IdempotencyStore(db, 86_400, lease_seconds=0.3, instance="a")
        other = IdempotencyStore(db, 86_400, lease_seconds=0.3, instance="b")
        assert (await owner.claim("k", "print")).kind == "new"
        await asyncio.sleep(0.9)  # three leases: only the heartbeat keeps "a" the owner
        busy = await other.claim("k", "print", wait=0)
        await owner.finish("k", StoredAnswer(200, {"ok": True}), None)
        replay = await other.claim("k", "print")
        await owner.close()
        await other.close()
    finally:
        await db.dispose()
    assert busy.kind == "busy"
    assert replay == Claim("replay", StoredAnswer(200, {"ok": True}))


async def test_the_migration_keeps_existing_rows_and_old_running_keys_are_released(
    tmp_path: Path,
) -> None:
    db = Database(f"sqlite:///{tmp_path}/old.db")

    def gateway_0001_schema(unit: Unit) -> None:
        conn = unit.connection
        with Operations.context(MigrationContext.configure(conn)):
            gateway_0001.upgrade()
        conn.execute(sa.text("CREATE TABLE alembic_version (version_num VARCHAR(32) PRIMARY KEY)"))
        conn.execute(sa.text("INSERT INTO alembic_version VALUES ('gateway_0001')"))
        now = time.time()
        for key, state, response in (
            ("old-done", "done", '{"id": "x"}'),
            ("old-run", "in_progress", None),
        ):
            conn.execute(
                sa.text(
                    "INSERT INTO gateway_idempotency (key, fingerprint, state, status_code,"
                    " response, created_at, expires_at) VALUES (:k, 'p', :s, 200, :r, :n, :e)"
                ),
                {"k": key, "s": state, "r": response, "n": now, "e": now + HOUR},
            )

    try:
        await db.write(gateway_0001_schema)
        await db.migrate()
        store = IdempotencyStore(db, 86_400)
        assert (await _row(db, "old-run")).owner is None
        assert await store.sweep() == 1
        replay = await store.claim("old-done", "p")
        assert await _row(db, "old-run") is None
    finally:
        await db.dispose()
    assert replay.kind == "replay" and replay.answer == StoredAnswer(200, {"id": "x"})


def _user(text: str, **meta: Any) -> Message:
    return Message.user(text, meta=meta)


def test_committed_turn_is_every_assistant_text_up_to_the_next_user_message() -> None:
    key = "anon:k"
    call = ToolCall(id="c1", name="bash", args={})
    history = [
        _user("earlier", run_ids=["r0"]),
        Message.assistant("old answer"),
        _user("do it", run_ids=["r1"], source_message_id=turn_ref(key)),
        Message.assistant("Let me check.", (call,), usage=Usage(prompt_tokens=3)),
        Message.tool("c1", "bash", "ok"),
        Message.assistant("Done.", usage=Usage(prompt_tokens=4, completion_tokens=2)),
        _user("next"),
        Message.assistant("next answer"),
    ]
    by_ref = committed_turn(history, turn_ref(key), None)
    by_run = committed_turn(history, "no-such-ref", "r1")
    assert by_ref is not None and by_run == by_ref
    assert by_ref.turn_id == "r1"
    assert by_ref.text == "Let me check.\n\nDone."
    assert (by_ref.usage.prompt_tokens, by_ref.usage.completion_tokens) == (7, 2)
    assert not by_ref.length
    assert committed_turn(history, "no-such-ref", "r9") is None


def test_an_interrupted_or_unanswered_turn_committed_nothing() -> None:
    call = ToolCall(id="c1", name="bash", args={})
    interrupted = [
        _user("run", run_ids=["r1"]),
        Message.assistant("Let me check.", (call,)),
        Message.tool("c1", "bash", "interrupted by a restart", is_error=True),
    ]
    unanswered = [_user("run", run_ids=["r1"])]
    limited = [
        _user("run", run_ids=["r1"]),
        Message.assistant("Let me check.", (call,)),
        Message.tool("c1", "bash", "ok"),
        Message.assistant("Stopped: too many steps.", meta={"limit": "max_iterations"}),
    ]
    assert committed_turn(interrupted, "ref", "r1") is None
    assert committed_turn(unanswered, "ref", "r1") is None
    at_limit = committed_turn(limited, "ref", "r1")
    assert at_limit is not None and at_limit.length


class _HeldClaims(Database):
    """A database whose claim writes, once committed, wait for ``hold`` before returning
    (``held`` is set when one does): the ordering two connections give when a retry's read
    crosses the answer's write."""

    hold: asyncio.Event | None = None
    held: asyncio.Event | None = None

    async def _held(self, work: Any) -> Any:
        result = await super().write(work)
        name = getattr(getattr(work, "func", None), "__name__", "")
        if self.hold is not None and self.held is not None and name == "_claim":
            self.held.set()
            await self.hold.wait()
        return result

    def write(self, work: Any) -> Any:
        return self._held(work)


async def test_a_retry_that_read_the_key_running_as_its_answer_was_stored_replays_it(
    database_url: str,
) -> None:
    """The retry's claim read the row in progress; before it looked for the request's
    waiter, the request stored its answer and dropped the waiter. It used to answer 409
    ``idempotency_in_progress`` to a client that already held the answer (the kill -9
    suite on PostgreSQL: "a second retry was not a replay")."""
    db = _HeldClaims(database_url)
    await db.migrate()
    store = IdempotencyStore(db, 86_400)
    try:
        assert (await store.claim("k", "print", session_id="s")).kind == "new"
        db.hold, db.held = asyncio.Event(), asyncio.Event()
        retry = asyncio.create_task(store.claim("k", "print", session_id="s"))
        await asyncio.wait_for(db.held.wait(), 5)  # it read the row in progress
        answer = StoredAnswer(200, {"id": "chatcmpl-k", "object": "chat.completion"})
        await store.finish("k", answer, "s")
        db.hold.set()
        assert await retry == Claim("replay", answer)
    finally:
        await store.close()
        await db.dispose()
