"""Context compaction (seed 001 ``bc_compactor``, by tokens instead of message counts).

The older part of the LLM view is summarised by the compaction model into a
``[Conversation summary]`` system message; the newest messages, up to
``compaction_target_pct`` of the context window, stay verbatim. The split point never
falls between an assistant tool call and its results (the kept tail starts at a user or
assistant message). If the summary call fails, the older part is trimmed deterministically
(the previous summary, if any, is kept). Raw messages are never deleted: the result is a
``summary`` marker row that moves the start of the view.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from loguru import logger

from beamclaw_core.loop.inputs import CompactionDone
from beamclaw_core.loop.request import LlmRequest, TurnRequestBuilder, summary_message
from beamclaw_core.messages import Message, Role
from beamclaw_core.providers import (
    Provider,
    ProviderError,
    estimate_message_tokens,
)
from beamclaw_core.store import SUMMARY, ConversationStore, StoredMessage
from beamclaw_obs import EventType, emit, scrub

SUMMARY_INSTRUCTIONS = (
    "You compact a conversation between a user and an AI assistant. Write a concise, "
    "factual summary of the conversation below: decisions, facts about the user, open "
    "tasks, results of tool calls that still matter. No preamble."
)


def split_point(rows: Sequence[StoredMessage], target_tokens: int) -> int:
    """Index of the first kept row: the longest tail within ``target_tokens`` that starts
    at a user or assistant message; 0 when nothing can be summarised."""
    best = len(rows)
    total = 0
    for i in range(len(rows) - 1, -1, -1):
        message = rows[i].message
        assert message is not None
        total += estimate_message_tokens(message)
        if total > target_tokens and best < len(rows):
            break
        if message.role is not Role.TOOL:
            best = i
    if best >= len(rows):
        # No boundary at all (only tool messages?): keep everything.
        return 0
    return best


def render(messages: Sequence[Message], previous: str | None) -> str:
    lines: list[str] = []
    if previous:
        lines.append(f"Earlier summary: {previous}")
    for m in messages:
        if m.role is Role.TOOL:
            lines.append(f"tool {m.name} result: {m.text[:2000]}")
        elif m.tool_calls:
            calls = ", ".join(f"{c.name}({c.args})" for c in m.tool_calls)
            lines.append(f"assistant: {m.text} [called {calls}]")
        else:
            lines.append(f"{m.role.value}: {m.text}")
    return "\n".join(lines)


class Compactor:
    """Compacts one conversation's view. Never raises for an LLM failure."""

    def __init__(
        self,
        store: ConversationStore,
        provider: Provider,
        *,
        target_pct: int = 40,
        model: str | None = None,
        timeout: float = 120.0,
        clock: Callable[[], float],
    ) -> None:
        self.store = store
        self.provider = provider
        self.target_pct = target_pct
        self.model = model
        self.timeout = timeout
        self.clock = clock

    async def compact(
        self,
        conversation_id: str,
        window: int,
        *,
        flush: Callable[[], Awaitable[None]] | None = None,
        reason: str = "threshold",
    ) -> CompactionDone:
        view = await self.store.view(conversation_id)
        rows = await self.store.view_rows(conversation_id)
        before = sum(estimate_message_tokens(r.message) for r in rows if r.message is not None)
        target = max(1, window * self.target_pct // 100)
        if reason == "overflow":
            # The provider refused the prompt, whatever our estimate says: keep at most
            # half of what is there now (and of the usual target).
            target = max(1, min(target, before) // 2)
        cut = split_point(rows, target)
        if cut == 0:
            return CompactionDone(before, before, 0)
        if flush is not None:
            try:
                await flush()
            except Exception as e:  # the flush is best effort; compaction must go on
                logger.warning("{}: memory flush failed: {}", conversation_id, e)
        head = [r.message for r in rows[:cut] if r.message is not None]
        summary, fallback = await self._summarise(head, view.summary)
        kept = rows[cut:]
        await self.store.append_marker(
            conversation_id,
            SUMMARY,
            {
                "summary": summary,
                "first_kept_seq": kept[0].seq if kept else rows[-1].seq + 1,
                "fallback": fallback,
                "summarized": len(head),
                "reason": reason,
            },
            now=self.clock(),
        )
        after = sum(estimate_message_tokens(r.message) for r in kept if r.message is not None)
        if summary:
            after += estimate_message_tokens(summary_message(summary))
        emit(
            EventType.COMPACTION_COMPLETE,
            session_id=conversation_id,
            before=before,
            after=after,
            summarized=len(head),
            fallback=fallback,
        )
        return CompactionDone(before, after, len(head), fallback)

    def summary_request(self, head: Sequence[Message], previous: str | None) -> LlmRequest:
        """The summary call: :data:`SUMMARY_INSTRUCTIONS`, then ``head`` (and the
        ``previous`` summary) rendered as one user message; no tools, the compaction model."""
        builder = TurnRequestBuilder((Message.system(SUMMARY_INSTRUCTIONS),), model=self.model)
        return builder.request(then=[Message.user(render(head, previous))])

    async def _summarise(
        self, head: list[Message], previous: str | None
    ) -> tuple[str | None, bool]:
        request = self.summary_request(head, previous)
        try:
            async with asyncio.timeout(self.timeout):
                completion = await self.provider.complete(request.messages, request.options)
        except (ProviderError, TimeoutError) as e:
            logger.warning("compaction summary failed, trimming instead: {}", e)
            return previous, True
        text = scrub(completion.message.text.strip())
        if not text:
            return previous, True
        return text, False
