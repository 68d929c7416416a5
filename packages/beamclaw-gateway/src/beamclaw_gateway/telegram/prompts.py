"""Approval prompts in chats: shown with buttons, answered from a button press, settled
(buttons removed, the decision shown) however they were answered.

Invariants: a request is prompted at most once per chat (per run: the buttons live in
memory, so after a restart it is prompted again); a press counts only in the chat its
prompt was shown in; the first answer
stands (a later press is told so); a prompt is settled once, whether by its buttons, by
``/yes``/``/no``/``/always``, by another front end or by the timeout.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable

from aiogram.methods import AnswerCallbackQuery
from aiogram.types import CallbackQuery

from beamclaw_core.api import Core
from beamclaw_core.loop import ApprovalRequested, ApprovalResolved
from beamclaw_gateway.telegram.approvals import ApprovalButtons, Prompt, prompt_text
from beamclaw_gateway.telegram.errors import TelegramChannelError
from beamclaw_gateway.telegram.render import render
from beamclaw_gateway.telegram.send import TextSender
from beamclaw_obs import cancel_and_wait

SETTLED = {
    "yes": "✅ Approved",
    "no": "❌ Denied",
    "always": "♾ Always allowed",
    "timeout": "⌛ Nobody answered in time; denied",
}
PRESSED = {"yes": "Approved", "no": "Denied", "always": "Approved (always)"}


class ApprovalPrompts:
    """The approval prompts of one bot (see the module invariants)."""

    def __init__(self, sender: TextSender, core: Callable[[], Core]) -> None:
        self._sender = sender
        self._core = core
        self.buttons = ApprovalButtons()
        self._settling: set[asyncio.Task[None]] = set()

    async def ask(self, chat_id: int, reply_to: int | None, request: ApprovalRequested) -> None:
        """Prompt ``request`` in ``chat_id``, unless it is prompted there already (the
        live turn, a follower's pending list and its event stream may all name it)."""
        if any(p.chat_id == chat_id for p in self.buttons.of_request(request.request_id)):
            return
        short = self.buttons.add(request, chat_id)
        message_id = await self._sender.send(
            chat_id,
            render(prompt_text(request))[0],
            reply_to=reply_to,
            markup=self.buttons.keyboard(short),
        )
        prompt = self.buttons.get(short)
        if prompt is not None:
            prompt.message_id = message_id

    def resolved(self, event: ApprovalResolved) -> None:
        """An approval was answered somewhere: settle its prompts (in the background)."""
        for prompt in self.buttons.of_request(event.request_id):
            task = asyncio.get_running_loop().create_task(self._settle(prompt, event.decision))
            self._settling.add(task)
            task.add_done_callback(self._settling.discard)

    async def pressed(self, query: CallbackQuery) -> None:
        """A button was pressed: answer the approval, tell the presser, settle the prompt."""
        api = self._sender.api
        parsed = self.buttons.parse(query.data)
        prompt = self.buttons.get(parsed[0]) if parsed is not None else None
        chat = query.message.chat.id if query.message is not None else None
        if parsed is None or prompt is None or chat != prompt.chat_id:
            await api(
                AnswerCallbackQuery(callback_query_id=query.id, text="This approval has expired.")
            )
            return
        decision = parsed[1]
        outcome, _info = await self._core().answer_approval_by_id(prompt.request_id, decision)
        note = {
            "answered": f"{PRESSED[decision]}: {prompt.tool}",
            "already_answered": "Already answered.",
            "unknown": "This approval is no longer pending.",
        }[outcome]
        await api(AnswerCallbackQuery(callback_query_id=query.id, text=note))
        if outcome == "answered":
            await self._settle(prompt, decision)

    async def _settle(self, prompt: Prompt, decision: str) -> None:
        if prompt.decided is not None or prompt.message_id is None:
            return
        prompt.decided = decision
        verb = SETTLED.get(decision, f"Answered ({decision})")
        with contextlib.suppress(TelegramChannelError):
            chunk = render(f"{verb}: `{prompt.tool}`")[0]
            await self._sender.edit(prompt.chat_id, prompt.message_id, chunk)

    async def close(self) -> None:
        await cancel_and_wait(list(self._settling))
