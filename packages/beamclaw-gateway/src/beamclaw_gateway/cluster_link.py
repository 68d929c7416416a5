"""Redis as the cluster's :class:`~beamclaw_core.cluster.ClusterLink`.

* Lease: ``<prefix>:lease:<session>`` holds ``<node>:<epoch>`` with a TTL; taken (``SET
  NX`` semantics) and the epoch ``INCR``-ed in one Lua script, so epochs only grow
  (``<prefix>:epoch:<session>`` never expires); renewed and released only by the holder
  of that exact value. A missing epoch counter (a flushed Redis) is first seeded from
  ``floor`` — the epoch the shared store last saw for that name — so a grant is always
  above every epoch the store has accepted.
* Commands: one pub/sub channel ``<prefix>:commands`` heard by every node.
* Events: a stream ``<prefix>:events:<session>`` (capped) per session, written in order
  by one task, each event with its owner's number (``seq``); a node reads the streams of
  the sessions it watches from the moment it started watching each, skipping what it
  wrote itself, and reads a stream's newest entries back for a client resuming there. A
  lease is released only once this node's events are written (the next owner numbers
  on from them).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import Awaitable, Callable
from typing import Any

import redis.asyncio as aioredis
from loguru import logger

from beamclaw_core.cluster import Command, CommandDecodeError, LinkInbox, command_from_dict
from beamclaw_core.loop import EventDecodeError, TurnEvent

_ACQUIRE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return -1 end
if redis.call('EXISTS', KEYS[2]) == 0 then
  if ARGV[3] == '' then return -2 end
  redis.call('SET', KEYS[2], ARGV[3], 'NX')
end
local epoch = redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[1], ARGV[1] .. ':' .. epoch, 'PX', ARGV[2])
return epoch
"""
_RENEW = """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
"""
_RELEASE = """
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
"""
_UNSEEDED = -2
"""What ``_ACQUIRE`` answers, without a seed, when the epoch counter is missing."""
STREAM_MAXLEN = 2000
"""Events kept per session stream (approximately; older ones are trimmed)."""
RELAY_DRAIN_SECONDS = 2.0
"""How long a release waits for this node's relayed events to be written first."""
READ_BLOCK_MS = 250
"""How long one read of the watched streams waits (newly watched sessions join after)."""


class RedisLink:
    """Leases, commands and events of a cluster on one Redis (see the module)."""

    def __init__(
        self,
        url: str,
        *,
        node_id: str,
        lease_seconds: float,
        floor: Callable[[str], Awaitable[int]],
        prefix: str = "beamclaw",
    ) -> None:
        """``floor(name)``: the newest epoch the shared store accepted for ``name``
        (asked only when its epoch counter is missing)."""
        self._floor = floor
        self._redis: aioredis.Redis = aioredis.Redis.from_url(url, decode_responses=True)
        self._node = node_id
        self._lease_ms = int(lease_seconds * 1000)
        self._lease_seconds = lease_seconds
        self._prefix = prefix
        self._acquire = self._redis.register_script(_ACQUIRE)
        self._renew = self._redis.register_script(_RENEW)
        self._release = self._redis.register_script(_RELEASE)
        self._outbox: asyncio.Queue[TurnEvent] = asyncio.Queue()
        self._writing = False
        self._positions: dict[str, str] = {}
        """Per watched session, the id of the last stream entry read."""

    @property
    def shared(self) -> bool:
        return True

    @property
    def lease_seconds(self) -> float:
        return self._lease_seconds

    @property
    def node_id(self) -> str:
        return self._node

    def _key(self, kind: str, session_id: str) -> str:
        return f"{self._prefix}:{kind}:{session_id}"

    # ------------------------------------------------------------ leases

    async def acquire(self, session_id: str) -> int | None:
        keys = [self._key("lease", session_id), self._key("epoch", session_id)]
        epoch = int(await self._acquire(keys=keys, args=[self._node, self._lease_ms, ""]))
        if epoch == _UNSEEDED:
            seed = await self._floor(session_id)
            args = [self._node, self._lease_ms, seed]
            epoch = int(await self._acquire(keys=keys, args=args))
        return None if epoch < 0 else epoch

    async def renew(self, session_id: str, epoch: int) -> bool:
        keys = [self._key("lease", session_id)]
        args = [f"{self._node}:{epoch}", self._lease_ms]
        return bool(int(await self._renew(keys=keys, args=args)))

    async def release(self, session_id: str, epoch: int) -> None:
        if self._writing:  # the next owner numbers on from these events
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(RELAY_DRAIN_SECONDS):
                    await self._outbox.join()
        await self._release(keys=[self._key("lease", session_id)], args=[f"{self._node}:{epoch}"])

    async def holder(self, session_id: str) -> str | None:
        """``<node>:<epoch>`` of the session's lease, None when it is free."""
        value = await self._redis.get(self._key("lease", session_id))
        return None if value is None else str(value)

    # ------------------------------------------------------------ commands and events

    async def tell(self, command: Command) -> None:
        await self._redis.publish(f"{self._prefix}:commands", json.dumps(command.to_dict()))

    def publish(self, event: TurnEvent) -> None:
        self._outbox.put_nowait(event)

    async def recent(self, session_id: str, count: int) -> list[TurnEvent]:
        entries: Any = await self._redis.xrevrange(self._key("events", session_id), count=count)
        events: list[TurnEvent] = []
        for _entry_id, fields in reversed(entries or []):
            event = _decode(session_id, fields)
            if event is not None:
                events.append(event)
        return events

    async def follow(self, session_id: str) -> None:
        """Relay the session's events from now on (before a forwarded run can start)."""
        if session_id not in self._positions:
            self._positions[session_id] = await self._latest(session_id)

    async def serve(self, inbox: LinkInbox) -> None:
        tasks = [
            asyncio.ensure_future(self._write_events()),
            asyncio.ensure_future(self._listen(inbox)),
            asyncio.ensure_future(self._read_events(inbox)),
        ]
        try:
            await asyncio.gather(*tasks)
        finally:
            for task in tasks:
                task.cancel()
            for task in tasks:
                with contextlib.suppress(asyncio.CancelledError):
                    await task

    async def close(self) -> None:
        await self._redis.aclose()

    # ------------------------------------------------------------ internals

    async def _latest(self, session_id: str) -> str:
        last: Any = await self._redis.xrevrange(self._key("events", session_id), count=1)
        return str(last[0][0]) if last else "0-0"

    async def _write_events(self) -> None:
        self._writing = True
        try:
            await self._write_forever()
        finally:
            self._writing = False

    async def _write_forever(self) -> None:
        while True:
            event = await self._outbox.get()
            fields = {"node": self._node, "event": json.dumps(event.to_dict())}
            try:
                await self._redis.xadd(
                    self._key("events", event.session_id),
                    fields,  # pyright: ignore[reportArgumentType] - str fields are valid
                    maxlen=STREAM_MAXLEN,
                    approximate=True,
                )
            except aioredis.RedisError:
                logger.opt(exception=True).warning("relaying an event failed")
            finally:
                self._outbox.task_done()

    async def _listen(self, inbox: LinkInbox) -> None:
        pubsub = self._redis.pubsub(ignore_subscribe_messages=True)
        await pubsub.subscribe(f"{self._prefix}:commands")
        try:
            async for message in pubsub.listen():
                try:
                    command = command_from_dict(json.loads(message["data"]))
                except (CommandDecodeError, ValueError, TypeError):
                    logger.warning("not a cluster command: {!r}", message.get("data"))
                    continue
                try:
                    await inbox.on_command(command)
                except Exception:
                    logger.opt(exception=True).error("cluster command {} failed", command)
        finally:
            await pubsub.aclose()

    async def _read_events(self, inbox: LinkInbox) -> None:
        while True:
            watched = set(inbox.watched())
            for gone in set(self._positions) - watched:
                del self._positions[gone]
            for session_id in watched - set(self._positions):
                self._positions[session_id] = await self._latest(session_id)
            if not self._positions:
                await asyncio.sleep(READ_BLOCK_MS / 1000)
                continue
            streams: dict[Any, Any] = {
                self._key("events", sid): pos for sid, pos in self._positions.items()
            }
            replies: Any = await self._redis.xread(streams, block=READ_BLOCK_MS)
            for stream, entries in replies or []:  # RESP2: [(stream, [(id, fields)])]
                session_id = str(stream)[len(self._prefix) + len(":events:") :]
                for entry_id, fields in entries:
                    if session_id in self._positions:
                        self._positions[session_id] = str(entry_id)
                    if fields.get("node") == self._node:
                        continue
                    event = _decode(session_id, fields)
                    if event is not None:
                        inbox.on_event(event)


def _decode(session_id: str, fields: Any) -> TurnEvent | None:
    """The event of a stream entry (None, logged: not one)."""
    try:
        return TurnEvent.from_dict(json.loads(fields["event"]))
    except (EventDecodeError, ValueError, KeyError, TypeError):
        logger.warning("{}: undecodable relayed event skipped", session_id)
        return None
