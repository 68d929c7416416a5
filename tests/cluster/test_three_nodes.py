"""Three real gateway nodes on one PostgreSQL database and one Redis (docs/scale-out.md).

The nodes start together (they migrate once), then share one fake OpenAI server: a
conversation alternating between nodes keeps one ordered history; one rate limit counts
across nodes; a scheduled job fires once; ``kill -9`` of a session's owner mid-turn hands
the session to another node within the lease, nothing lost or doubled; a pending approval
and a session's state are answered at any node; after the nodes' Redis keys are wiped (the
last test) a turn is written under an epoch above every stored one.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
import pytest_asyncio
import websockets

from beamclaw_core.store import ConversationStore
from beamclaw_core.testing import (
    FakeLLMServer,
    FakeOpenAIServer,
    FakeReply,
    FakeToolCall,
    RecordedRequest,
)
from beamclaw_gateway.fake_telegram import FakeBotApi
from beamclaw_memory import Database

from .cluster_support import (
    LEASE_SECONDS,
    Node,
    free_ports,
    node_config,
    service_url,
    telegram_config,
)

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.slow,
    pytest.mark.asyncio(loop_scope="module"),
]

HANG = asyncio.Event()
"""Released at the end: the request of the turn whose owner is killed hangs until then."""


def _last_user_text(request: RecordedRequest) -> str:
    users = [m for m in request.body["messages"] if m.get("role") == "user"]
    return str(users[-1]["content"]) if users else ""


def _echo(request: RecordedRequest) -> FakeReply:
    text = _last_user_text(request)
    if request.body["messages"][-1].get("role") == "tool":
        return FakeReply("the file is written")
    if "please write" in text:
        call = FakeToolCall("write_file", {"path": "note.txt", "content": "hi"}, id="call-1")
        return FakeReply(tool_calls=(call,))
    if "hang here" in text:
        return FakeReply("answered after the failover", hold=HANG)  # holds only a stream
    return FakeReply(f"echo: {text}")


class Cluster:
    def __init__(
        self,
        nodes: list[Node],
        llm: FakeLLMServer,
        tg: FakeBotApi,
        database_url: str,
        redis_url: str,
        prefix: str,
    ) -> None:
        self.nodes = nodes
        self.llm = llm
        self.tg = tg
        self.database_url = database_url
        self.redis_url = redis_url
        self.prefix = prefix
        """Every Redis key of this module's nodes starts with it (the test Redis is shared)."""


@pytest.fixture(scope="module")
def database_url() -> Iterator[str]:
    """A fresh PostgreSQL database for the module (the nodes share it)."""
    admin = service_url("BEAMCLAW_TEST_POSTGRES_URL")
    import asyncpg  # type: ignore[import-untyped]

    name = f"bc_cluster_{uuid.uuid4().hex[:12]}"

    async def run(sql: str) -> None:
        conn = await asyncpg.connect(admin)  # pyright: ignore[reportUnknownMemberType]
        try:
            await conn.execute(sql)  # pyright: ignore[reportUnknownMemberType]
        finally:
            await conn.close()  # pyright: ignore[reportUnknownMemberType]

    asyncio.run(run(f'CREATE DATABASE "{name}"'))
    try:
        yield f"{admin.rsplit('/', 1)[0]}/{name}"
    finally:
        asyncio.run(run(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def cluster(
    tmp_path_factory: pytest.TempPathFactory, database_url: str
) -> AsyncIterator[Cluster]:
    redis_url = service_url("BEAMCLAW_TEST_REDIS_URL")
    root = tmp_path_factory.mktemp("cluster")
    prefix = f"bc-test-{uuid.uuid4().hex[:8]}"
    async with FakeOpenAIServer([_echo] * 500) as llm, FakeBotApi() as tg:
        nodes: list[Node] = []
        for name, port in zip(("n1", "n2", "n3"), free_ports(3), strict=True):
            config = node_config(
                port=port,
                node_id=name,
                database_url=database_url,
                redis_url=redis_url,
                prefix=prefix,
                llm=llm.base_url,
                extra=telegram_config(tg.base_url, tg.token),
            )
            nodes.append(Node(root, name, config, port))
        try:
            for node in nodes:  # all three at once: they race to migrate the empty database
                node.spawn()
            await asyncio.gather(*(node.ready() for node in nodes))
            yield Cluster(nodes, llm, tg, database_url, redis_url, prefix)
        finally:
            HANG.set()
            for node in nodes:
                node.stop()


@contextlib.asynccontextmanager
async def _killed(node: Node) -> AsyncIterator[float]:
    """``kill -9`` of ``node`` (yields when); the node is started again on the way out
    whatever the test found, so one failure does not take the module's later tests
    (which share the cluster) down with it."""
    node.kill_9()
    try:
        yield time.monotonic()
    finally:
        node.spawn()
        await node.ready()


async def _ask(node: Node, session_id: str, text: str) -> str:
    async with httpx.AsyncClient(base_url=node.base_url, timeout=60) as client:
        response = await client.post(
            "/v1/chat/completions",
            headers={"X-Session-Id": session_id, "X-Approval-Mode": "wait"},
            json={"model": "default", "messages": [{"role": "user", "content": text}]},
        )
    assert response.status_code == 200, response.text
    return str(response.json()["choices"][0]["message"]["content"])


async def _history(node: Node, session_id: str) -> list[tuple[str, str]]:
    async with httpx.AsyncClient(base_url=node.base_url, timeout=30) as client:
        response = await client.get(f"/api/sessions/{session_id}")
    assert response.status_code == 200, response.text
    return [(m["role"], str(m["content"])) for m in response.json()["messages"]]


async def test_nodes_started_together_migrated_once(cluster: Cluster) -> None:
    db = Database(cluster.database_url)
    try:
        heads = await db.current_heads()
        assert "core_0005" in heads
        # one row per branch head: no node applied a revision twice
        assert len(heads) == len(await db.migrate())
    finally:
        await db.dispose()


async def test_a_conversation_alternating_between_nodes_keeps_one_history(
    cluster: Cluster,
) -> None:
    session = f"alt-{uuid.uuid4().hex[:6]}"
    for i in range(6):
        node = cluster.nodes[i % 3]
        assert await _ask(node, session, f"message {i}") == f"echo: message {i}"
    expected = [
        pair
        for i in range(6)
        for pair in (("user", f"message {i}"), ("assistant", f"echo: message {i}"))
    ]
    for node in cluster.nodes:
        assert await _history(node, session) == expected


async def test_messages_sent_at_once_to_three_nodes_are_each_answered_once(
    cluster: Cluster,
) -> None:
    session = f"race-{uuid.uuid4().hex[:6]}"
    answers = await asyncio.gather(
        *(_ask(node, session, f"at once {i}") for i, node in enumerate(cluster.nodes))
    )
    history = await _history(cluster.nodes[0], session)
    users = [text for role, text in history if role == "user"]
    for i, answer in enumerate(answers):  # collect mode may merge some into one turn
        asked = [text for text in users if f"at once {i}" in text]
        assert len(asked) == 1, users  # stored once
        assert answer == f"echo: {asked[0]}"  # the answer of the turn it was part of
    for position, (role, text) in enumerate(history):  # each question, then its answer
        if role == "user":
            assert history[position + 1] == ("assistant", f"echo: {text}")


async def test_a_ws_client_on_one_node_sees_and_answers_a_turn_on_another(
    cluster: Cluster,
) -> None:
    session = f"ws-{uuid.uuid4().hex[:6]}"
    watcher, runner = cluster.nodes[0], cluster.nodes[1]
    assert await _ask(runner, session, "hello") == "echo: hello"
    url = watcher.base_url.replace("http://", "ws://") + "/ws"
    async with websockets.connect(url) as ws:

        async def frame(kind: str) -> dict[str, Any]:
            while True:
                data = json.loads(await asyncio.wait_for(ws.recv(), 30))
                if data.get("type") == kind:
                    return data

        await ws.send(json.dumps({"type": "subscribe", "session_id": session}))
        await frame("subscribed")
        await asyncio.sleep(0.6)  # the watcher reads the session's stream from here on
        asking = asyncio.ensure_future(_ask(runner, session, "please write a note"))
        requested = await frame("approval_requested")
        await ws.send(
            json.dumps(
                {
                    "type": "approval",
                    "session_id": session,
                    "request_id": requested["request_id"],
                    "decision": "yes",
                }
            )
        )
        done = await frame("turn_done")
        assert done["text"] == "the file is written"
    assert await asking == "the file is written"


async def test_one_rate_limit_across_nodes(cluster: Cluster) -> None:
    # an outside client (behind the trusted proxy) has 6 requests a minute, in all
    client_ip = f"203.0.113.{uuid.uuid4().int % 200 + 1}"
    statuses: list[int] = []
    for i in range(9):
        node = cluster.nodes[i % 3]
        async with httpx.AsyncClient(base_url=node.base_url, timeout=10) as client:
            response = await client.get("/api/status", headers={"X-Forwarded-For": client_ip})
        statuses.append(response.status_code)
    assert 429 not in statuses[:6], statuses
    assert statuses[6:] == [429, 429, 429], statuses


async def test_a_job_fires_once_with_three_nodes_up(cluster: Cluster) -> None:
    marker = f"job-{uuid.uuid4().hex[:6]}"
    at = (datetime.now(UTC) + timedelta(seconds=2)).isoformat()
    async with httpx.AsyncClient(base_url=cluster.nodes[1].base_url, timeout=10) as client:
        created = await client.post("/api/schedules", json={"prompt": f"say {marker}", "at": at})
    assert created.status_code == 201, created.text

    def fired() -> int:
        return sum(1 for r in cluster.llm.requests if marker in _last_user_text(r))

    deadline = time.monotonic() + 20
    while fired() == 0:
        assert time.monotonic() < deadline, "the job never fired"
        await asyncio.sleep(0.1)
    await asyncio.sleep(2)  # a second fire (another node's runner) would come now
    assert fired() == 1


async def test_kill_9_of_the_owner_mid_turn_hands_the_session_over(cluster: Cluster) -> None:
    session = f"kill-{uuid.uuid4().hex[:6]}"
    owner, other = cluster.nodes[2], cluster.nodes[0]
    assert await _ask(owner, session, "before") == "echo: before"
    asking = asyncio.ensure_future(_ask(owner, session, "hang here"))
    deadline = time.monotonic() + 20
    while not any("hang here" in _last_user_text(r) for r in cluster.llm.requests):
        assert time.monotonic() < deadline, "the turn never reached the LLM"
        await asyncio.sleep(0.05)
    async with _killed(owner) as killed_at:
        asking.cancel()  # its node is gone: whatever it got is not the answer
        await asyncio.gather(asking, return_exceptions=True)
        # another node takes the lease once it expires and recovers the turn as after a
        # restart: the interrupted turn either ends (an error, no answer) or is run again
        # (its question answered once); the question itself stays, once
        store = ConversationStore(Database(cluster.database_url))
        try:
            state = "awaiting_llm"
            while state not in ("idle", "error"):
                assert time.monotonic() - killed_at < LEASE_SECONDS * 4, f"still {state}"
                await asyncio.sleep(0.2)
                record = await store.get(session)
                assert record is not None
                state = record.state.kind
        finally:
            await store.db.dispose()
        recovered = await _history(other, session)
        assert recovered[:3] == [
            ("user", "before"),
            ("assistant", "echo: before"),
            ("user", "hang here"),
        ]
        assert recovered[3:] in ([], [("assistant", "answered after the failover")]), recovered
        # the session goes on on another node; nothing was lost or doubled
        assert await _ask(other, session, "after") == "echo: after"
        history = await _history(cluster.nodes[1], session)
        assert [t for r, t in history if r == "user"] == ["before", "hang here", "after"]


async def _telegram_states(cluster: Cluster) -> dict[str, str]:
    """Each live node's Telegram channel state (``polling``, ``standby``…)."""
    states: dict[str, str] = {}
    for node in cluster.nodes:
        if node.proc is None or node.proc.poll() is not None:
            continue
        async with httpx.AsyncClient(base_url=node.base_url, timeout=10) as client:
            health = (await client.get("/health")).json()
        channel = health["components"]["channels"].get("telegram", {})
        states[node.name] = str(channel.get("state"))
    return states


async def _one_poller(cluster: Cluster, seconds: float) -> str:
    """The one node polling Telegram once the others stand by (its name)."""
    deadline = time.monotonic() + seconds
    while True:
        states = await _telegram_states(cluster)
        polling = [name for name, state in states.items() if state == "polling"]
        if len(polling) == 1 and sorted(states.values()).count("standby") == len(states) - 1:
            return polling[0]
        assert time.monotonic() < deadline, f"no single poller: {states}"
        await asyncio.sleep(0.1)


def _answers(tg: FakeBotApi, chat: int, text: str) -> int:
    """The bot's answers in ``chat`` echoing ``text`` (whatever the channel adds to it)."""
    return sum(
        1
        for m in tg.messages(chat)
        if not m.deleted and m.plain_text.startswith("echo:") and text in m.plain_text
    )


async def test_telegram_is_polled_by_one_elected_node_which_another_replaces(
    cluster: Cluster,
) -> None:
    tg = cluster.tg
    poller = await _one_poller(cluster, 30)
    chats = [7100 + i for i in range(3)]
    for chat in chats:
        tg.push_message(chat_id=chat, from_id=chat, text=f"telegram {chat}")
    await tg.wait_for(lambda _tg: all(_answers(tg, c, f"telegram {c}") for c in chats), 30)
    await asyncio.sleep(1.5)  # a second handling (another poller) would answer by now
    assert [_answers(tg, c, f"telegram {c}") for c in chats] == [1, 1, 1]
    # two nodes polling at once would terminate each other's getUpdates (409)
    assert [c for c in tg.calls_of("getUpdates") if c.status == 409] == []
    assert await _one_poller(cluster, 5) == poller  # the lease is renewed, not lost

    dead = next(node for node in cluster.nodes if node.name == poller)
    async with _killed(dead) as killed_at:
        tg.push_message(chat_id=7200, from_id=7200, text="telegram after the kill")
        await tg.wait_for(lambda _tg: _answers(tg, 7200, "telegram after the kill") > 0, 30)
        assert time.monotonic() - killed_at < LEASE_SECONDS * 4
        successor = await _one_poller(cluster, 5)
        assert successor != poller
        await asyncio.sleep(1.5)
        assert _answers(tg, 7200, "telegram after the kill") == 1
    assert await _one_poller(cluster, 10) == successor  # the restarted node stands by


async def _await_approval(node: Node, session_id: str, seconds: float) -> None:
    """Return once ``session_id`` waits for an approval on ``node`` (its owner)."""
    deadline = time.monotonic() + seconds
    async with httpx.AsyncClient(base_url=node.base_url, timeout=10) as client:
        while True:
            listed = (await client.get("/api/approvals")).json()
            for item in listed["approvals"]:
                if item["session_id"] == session_id:
                    return
            assert time.monotonic() < deadline, f"no approval pending: {listed}"
            await asyncio.sleep(0.1)


async def test_in_chat_commands_at_other_nodes_are_answered_by_the_owner(
    cluster: Cluster,
) -> None:
    session = f"cmd-{uuid.uuid4().hex[:6]}"
    owner, second, third = cluster.nodes
    asking = asyncio.ensure_future(_ask(owner, session, "please write a note"))
    await _await_approval(owner, session, 30)
    status = await _ask(second, session, "/status")
    assert f"Session {session}" in status, status
    assert "State: awaiting_approval" in status, status  # the owner's live state
    assert await _ask(third, session, "/yes") == "Approved: write_file."
    assert await asyncio.wait_for(asking, 30) == "the file is written"
    history = await _history(second, session)
    assert [t for r, t in history if r == "user"] == ["please write a note"]  # no command


async def test_messages_collected_from_other_nodes_each_get_the_merged_turns_end(
    cluster: Cluster,
) -> None:
    session = f"collect-{uuid.uuid4().hex[:6]}"
    owner, second, third = cluster.nodes
    asking = asyncio.ensure_future(_ask(owner, session, "please write a note"))
    await _await_approval(owner, session, 30)  # the owner is busy: the next ones queue
    late = [
        asyncio.ensure_future(_ask(node, session, f"collected from {node.name}"))
        for node in (second, third)
    ]
    store = ConversationStore(Database(cluster.database_url))
    try:
        deadline = time.monotonic() + 20
        while len(await store.pending(session)) < 2:  # both stored for the owner
            assert time.monotonic() < deadline, "the forwarded messages were not queued"
            await asyncio.sleep(0.05)
    finally:
        await store.db.dispose()
    await _ask(owner, session, "/yes")
    assert await asyncio.wait_for(asking, 30) == "the file is written"
    answers = await asyncio.wait_for(asyncio.gather(*late), 30)
    history = await _history(owner, session)
    merged = [t for r, t in history if r == "user" and "collected from" in t]
    assert len(merged) == 1, history  # one turn for both, at the owner
    assert f"collected from {second.name}" in merged[0]
    assert f"collected from {third.name}" in merged[0]
    assert answers == [f"echo: {merged[0]}"] * 2  # each sender got that turn's end


async def test_a_stream_read_at_one_node_resumes_at_another(cluster: Cluster) -> None:
    session = f"seq-{uuid.uuid4().hex[:6]}"
    first, runner, last = cluster.nodes
    assert await _ask(runner, session, "hello") == "echo: hello"

    def ws_url(node: Node) -> str:
        return node.base_url.replace("http://", "ws://") + "/ws"

    async def frame(ws: Any, kinds: tuple[str, ...]) -> dict[str, Any]:
        while True:
            data = json.loads(await asyncio.wait_for(ws.recv(), 30))
            assert data.get("type") != "error", data
            if data.get("type") in kinds:
                return data

    async with websockets.connect(ws_url(first)) as ws:
        await ws.send(json.dumps({"type": "subscribe", "session_id": session}))
        await frame(ws, ("subscribed",))
        await asyncio.sleep(0.6)  # the node reads the session's stream from here on
        assert await _ask(runner, session, "seen") == "echo: seen"
        seen = await frame(ws, ("turn_done",))
        assert seen["text"] == "echo: seen"
    # the client is away while another turn runs, then comes back at a third node
    assert await _ask(runner, session, "missed") == "echo: missed"
    async with websockets.connect(ws_url(last)) as ws:
        await ws.send(
            json.dumps({"type": "subscribe", "session_id": session, "after_seq": seen["seq"]})
        )
        subscribed = await frame(ws, ("subscribed",))
        assert subscribed["replayed"] > 0
        caught_up = await frame(ws, ("turn_done",))
        assert caught_up["text"] == "echo: missed"  # resumed, not reloaded
        assert caught_up["seq"] > seen["seq"]


async def test_a_page_read_at_one_node_subscribes_from_its_number_at_another(
    cluster: Cluster,
) -> None:
    session = f"page-{uuid.uuid4().hex[:6]}"
    first, runner, last = cluster.nodes
    assert await _ask(runner, session, "hello") == "echo: hello"
    await _history(last, session)  # this node shows the session first…
    await asyncio.sleep(0.05)
    async with httpx.AsyncClient(base_url=first.base_url, timeout=30) as client:
        page = (await client.get(f"/api/sessions/{session}")).json()  # …this one later
    url = last.base_url.replace("http://", "ws://") + "/ws"
    async with websockets.connect(url) as ws:
        subscribe = {"type": "subscribe", "session_id": session, "after_seq": page["event_seq"]}
        await ws.send(json.dumps(subscribe))
        while True:
            subscribed = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if subscribed["type"] in ("subscribed", "error"):
                break
        assert subscribed["type"] == "subscribed", subscribed  # not future_seq: reload
        asking = asyncio.ensure_future(_ask(runner, session, "after the page"))
        while True:
            data = json.loads(await asyncio.wait_for(ws.recv(), 30))
            if data.get("type") == "turn_done":
                break
        assert data["text"] == "echo: after the page" and data["seq"] > page["event_seq"]
        await asking


async def test_a_rest_reset_at_another_node_is_done_by_the_owner(cluster: Cluster) -> None:
    session = f"reset-{uuid.uuid4().hex[:6]}"
    owner, _, third = cluster.nodes
    asking = asyncio.ensure_future(_ask(owner, session, "please write a note"))
    await _await_approval(owner, session, 30)
    async with httpx.AsyncClient(base_url=third.base_url, timeout=30) as client:
        response = await client.post(f"/api/sessions/{session}/reset")
    assert response.status_code == 200, response.text
    await asyncio.gather(asking, return_exceptions=True)  # the reset cancelled the turn
    async with httpx.AsyncClient(base_url=owner.base_url, timeout=10) as client:
        listed = (await client.get("/api/approvals")).json()
    assert [a for a in listed["approvals"] if a["session_id"] == session] == []
    assert [t for r, t in await _history(third, session) if r == "user"] == [
        "please write a note"
    ]  # the raw history stays


async def test_a_telegram_chat_whose_session_runs_at_another_node_is_answered(
    cluster: Cluster,
) -> None:
    tg, chat = cluster.tg, 7300
    poller = await _one_poller(cluster, 30)
    tg.push_message(chat_id=chat, from_id=chat, text="telegram first")
    await tg.wait_for(lambda _tg: _answers(tg, chat, "telegram first") == 1, 30)
    async with httpx.AsyncClient(base_url=cluster.nodes[0].base_url, timeout=10) as client:
        sessions = (await client.get("/api/sessions")).json()["sessions"]
    session = next(s["session_id"] for s in sessions if s["user_id"] == f"tg:{chat}")
    elsewhere = next(node for node in cluster.nodes if node.name != poller)
    asking = asyncio.ensure_future(_ask(elsewhere, session, "please write a note"))
    await _await_approval(elsewhere, session, 30)  # the session runs at a non-poller
    tg.push_message(chat_id=chat, from_id=chat, text="telegram while elsewhere")
    store = ConversationStore(Database(cluster.database_url))
    try:
        deadline = time.monotonic() + 20
        while not await store.pending(session):  # the poller queued it for the owner
            assert time.monotonic() < deadline, "the Telegram message was not queued"
            await asyncio.sleep(0.05)
    finally:
        await store.db.dispose()
    assert await _ask(elsewhere, session, "/yes") == "Approved: write_file."
    assert await asyncio.wait_for(asking, 30) == "the file is written"
    await tg.wait_for(lambda _tg: _answers(tg, chat, "telegram while elsewhere") == 1, 30)


async def test_pending_approvals_and_state_are_answered_at_any_node(cluster: Cluster) -> None:
    session = f"pend-{uuid.uuid4().hex[:6]}"
    runner, asked_at, answered_at = cluster.nodes[2], cluster.nodes[0], cluster.nodes[1]
    asking = asyncio.ensure_future(_ask(runner, session, "please write a note"))
    pending: list[dict[str, Any]] = []
    async with httpx.AsyncClient(base_url=asked_at.base_url, timeout=30) as client:
        deadline = time.monotonic() + 30
        while not pending and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
            listed = (await client.get("/api/approvals", params={"session_id": session})).json()
            pending = listed["approvals"]
        assert [(p["session_id"], p["tool"]) for p in pending] == [(session, "write_file")]
        everyone = (await client.get("/api/approvals")).json()["approvals"]
        assert pending[0] in everyone
        detail = (await client.get(f"/api/sessions/{session}")).json()
        assert detail["session"]["state"] == "awaiting_approval"
        listed = (await client.get("/api/sessions")).json()["sessions"]
        assert {s["session_id"]: s["state"] for s in listed}[session] == "awaiting_approval"
    async with httpx.AsyncClient(base_url=answered_at.base_url, timeout=30) as client:
        response = await client.post(
            f"/api/approvals/{pending[0]['id']}", json={"decision": "approve"}
        )
        assert response.status_code == 200, response.text
    assert await asking == "the file is written"
    async with httpx.AsyncClient(base_url=asked_at.base_url, timeout=30) as client:
        assert (await client.get("/api/approvals", params={"session_id": session})).json() == {
            "approvals": []
        }
        detail = (await client.get(f"/api/sessions/{session}")).json()
        assert detail["session"]["state"] == "idle"


async def _epochs(cluster: Cluster, session_id: str) -> list[int]:
    """The epochs the session's messages were written under, in history order."""
    import asyncpg  # type: ignore[import-untyped]

    conn = await asyncpg.connect(cluster.database_url)  # pyright: ignore[reportUnknownMemberType]
    try:
        rows: Any = await conn.fetch(  # pyright: ignore[reportUnknownMemberType]
            "SELECT epoch FROM messages WHERE conversation_id = $1 ORDER BY seq", session_id
        )
    finally:
        await conn.close()  # pyright: ignore[reportUnknownMemberType]
    return [int(row["epoch"]) for row in rows]


async def test_a_flushed_redis_never_hands_out_an_epoch_the_store_passed(
    cluster: Cluster,
) -> None:
    """Last in the module: it wipes every key of the module's nodes (their FLUSHDB)."""
    import redis.asyncio as aioredis

    session = f"flush-{uuid.uuid4().hex[:6]}"
    for i, node in enumerate(cluster.nodes):  # three owners in turn: epoch 3 or more
        assert await _ask(node, session, f"before {i}") == f"echo: before {i}"
    before = max(await _epochs(cluster, session))
    assert before >= 3
    redis = aioredis.Redis.from_url(cluster.redis_url)
    try:
        keys = [key async for key in redis.scan_iter(match=f"{cluster.prefix}:*")]
        assert keys
        await redis.delete(*keys)
    finally:
        await redis.aclose()
    assert await _ask(cluster.nodes[0], session, "after") == "echo: after"
    after = await _epochs(cluster, session)
    assert min(after[-2:]) > before  # the new turn's question and answer
    assert await _history(cluster.nodes[1], session) == [
        *[
            pair
            for i in range(3)
            for pair in (("user", f"before {i}"), ("assistant", f"echo: before {i}"))
        ],
        ("user", "after"),
        ("assistant", "echo: after"),
    ]
