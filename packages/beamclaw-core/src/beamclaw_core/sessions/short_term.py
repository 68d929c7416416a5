"""Short-term memory across resets (seed 004 ADR-056; issue 26).

A daily or idle reset (or ``/new``) starts the LLM view afresh; the person's last
exchanges with the agent before it are carried into the new session as one delimited,
view-only system message (:func:`short_term_block`), built from the stored history before
the conversation's last reset marker. A conversation is one agent and one person (with
``session_sharing = "shared"``, across their channels), so what is carried is theirs.

Invariants:

* The block is never stored: it is added to each LLM request of the session after a
  reset (a stable prompt prefix) and rebuilt from the store, so it survives a restart
  and is never saved back into itself.
* It never nests: a carried block's text found in a message (a quoting reply) is cut
  out before the message is carried.
* Only the person's exchanges are carried: scheduled turns (jobs, heartbeats: the user
  message's ``meta["scheduled"]``) with their answers, system and tool messages are not.
* Never fails a turn: a failed read is logged and the request goes without the block
  (the next request tries again).
* At most ``exchanges`` exchanges, the newest, each message cut to
  ``max_chars_per_message``; they are looked for among the last
  ``exchanges * ROWS_PER_EXCHANGE`` rows before the reset (one bounded read).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from loguru import logger

from beamclaw_core.messages import TOOL_IMAGES, Message, Role
from beamclaw_core.sessions.ends import SessionEnd
from beamclaw_core.sessions.memory_context import SHORT_TERM_KIND
from beamclaw_core.sessions.runs import SCHEDULED_META
from beamclaw_core.settings import ShortTermSettings
from beamclaw_core.store import ConversationStore, StoredMessage

SHORT_TERM_LABEL = "[memory:short_term]"
SHORT_TERM_END = "[/memory:short_term]"
ROWS_PER_EXCHANGE = 12
"""Rows read per wanted exchange (a turn with tool calls stores several messages)."""

_CARRIED = re.compile(
    re.escape(SHORT_TERM_LABEL) + r".*?(?:" + re.escape(SHORT_TERM_END) + r"|$)", re.S
)


@dataclass(frozen=True, slots=True)
class Exchange:
    """One exchange of the person with the agent: their message and the agent's answer
    (empty when the turn ended without text)."""

    user: str
    assistant: str


def _clean(text: str, max_chars: int) -> str:
    text = " ".join(_CARRIED.sub(" ", text).split())
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"


def exchanges(messages: Sequence[Message], max_chars: int) -> list[Exchange]:
    """The person's exchanges in ``messages`` (oldest first; see the invariants)."""
    found: list[Exchange] = []
    user: str | None = None
    answer = ""
    skipping = False
    for message in messages:
        if message.role is Role.USER and TOOL_IMAGES not in message.meta:
            if user is not None:
                found.append(Exchange(user, answer))
            user, answer = None, ""
            skipping = bool(message.meta.get(SCHEDULED_META))
            if not skipping:
                text = _clean(message.text, max_chars)
                user = text or None
        elif message.role is Role.ASSISTANT and user is not None and not skipping:
            text = _clean(message.text, max_chars)
            if text:
                answer = text  # the turn's last text is its answer
    if user is not None:
        found.append(Exchange(user, answer))
    return found


def short_term_block(
    rows: Sequence[StoredMessage], *, exchanges_wanted: int, max_chars: int
) -> str | None:
    """The delimited block carrying the last ``exchanges_wanted`` exchanges of ``rows``
    (the history before a reset), or None when there is none."""
    messages = [r.message for r in rows if r.message is not None]
    carried = exchanges(messages, max_chars)[-exchanges_wanted:]
    if not carried:
        return None
    lines = [
        f"{SHORT_TERM_LABEL} The last {len(carried)} exchanges of your previous session "
        "with this person, before it was reset (for continuity; they are not new messages):"
    ]
    for exchange in carried:
        lines.append(f"user: {exchange.user}")
        if exchange.assistant:
            lines.append(f"you: {exchange.assistant}")
    lines.append(SHORT_TERM_END)
    return "\n".join(lines)


class ShortTerm:
    """The short-term block of each session, rebuilt only when its last reset changes.

    The last reset comes from :meth:`ConversationStore.last_reset
    <beamclaw_core.store.ConversationStore.last_reset>`, which reads it once while the
    session stays in memory: a turn costs no read here.
    """

    def __init__(self, store: ConversationStore, settings: ShortTermSettings) -> None:
        self.store = store
        self.settings = settings
        self._blocks: dict[str, tuple[int | None, Message | None]] = {}

    async def message(self, session_id: str) -> Message | None:
        """The block of ``session_id``'s current session (None: never reset, or nothing
        to carry)."""
        try:
            reset = await self.store.last_reset(session_id)
            cached = self._blocks.get(session_id)
            if cached is not None and cached[0] == reset:
                return cached[1]
            return await self._build(session_id, reset)
        except Exception as e:  # memory is an aid: a failed read must not fail the turn
            logger.warning("{}: short-term memory not read: {}", session_id, e)
            return None

    async def _build(self, session_id: str, reset: int | None) -> Message | None:
        message: Message | None = None
        if reset is not None:
            wanted = self.settings.exchanges
            rows = await self.store.messages_before(
                session_id, reset, limit=wanted * ROWS_PER_EXCHANGE
            )
            body = short_term_block(
                rows, exchanges_wanted=wanted, max_chars=self.settings.max_chars_per_message
            )
            if body is not None:
                message = Message.system(body, meta={"kind": SHORT_TERM_KIND})
        self._blocks[session_id] = (reset, message)
        return message

    def forget(self, session_id: str) -> None:
        self._blocks.pop(session_id, None)

    async def session_ended(self, end: SessionEnd) -> None:
        """A session-end hook: a lane that left memory leaves nothing cached here."""
        if end.closed:
            self.forget(end.session_id)
