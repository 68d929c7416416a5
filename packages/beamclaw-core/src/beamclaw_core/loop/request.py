"""Every LLM request about a conversation: built here, and only here.

A turn's LLM call (a sub-agent's turns too), the memory flush of ``/new`` and of
compaction, the compaction summary and the ``/context`` estimate all come from one
:class:`TurnRequestBuilder` (a conversation's, from its turn ports: :func:`next_turn`).
Its request is, in this order:

1. the system messages: the workspace prompt's sections (preamble, bootstrap files,
   skills, ``[user:environment]``, daily logs, MEMORY.md — their order is
   :func:`~beamclaw_core.workspace.prompt.in_prompt_order`'s) and the auto-context;
2. the view's compaction summary, as a ``[Conversation summary]`` system message;
3. the history window: the view's messages (what the last summary or reset left), then
   whatever the caller adds after them (the flush's instructions and its own rounds),
   repaired as one history;

with the builder's tools and model in its :class:`CompletionOptions`.

Invariant (property-tested): the messages of every request are a valid history
(:func:`~beamclaw_core.loop.history.history_problems` finds nothing) — every assistant
tool call is followed by exactly its results, no result answers nothing. The builder is
pure; only :func:`next_turn` awaits (the ports).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from beamclaw_core.loop.history import HistoryRepair
from beamclaw_core.loop.ports import LoopDeps
from beamclaw_core.messages import Message
from beamclaw_core.providers import CompletionOptions
from beamclaw_core.store import View
from beamclaw_tools import ToolDef

SUMMARY_PREFIX = "[Conversation summary]: "
"""Starts the system message that carries the compaction summary."""


def summary_message(summary: str) -> Message:
    """The system message that carries a compaction summary into a request."""
    return Message.system(SUMMARY_PREFIX + summary)


@dataclass(frozen=True, slots=True)
class LlmRequest:
    """One provider request: ``messages`` in prompt order and the call's ``options``.

    The messages are shared with the builder's inputs (frozen models); callers pass the
    list to a provider and never mutate it.
    """

    messages: list[Message]
    options: CompletionOptions

    @property
    def tools(self) -> tuple[ToolDef, ...]:
        return self.options.tools


@dataclass(frozen=True, slots=True)
class TurnRequestBuilder:
    """Builds the requests of one moment of a conversation (see the module docstring).

    ``system``: the system prompt's messages; ``tools``/``model``: the call's options
    (``model`` None is the provider's configured one). :func:`next_turn` makes the one
    of a conversation's next turn from its ports.
    """

    system: tuple[Message, ...] = ()
    tools: tuple[ToolDef, ...] = ()
    model: str | None = None

    def with_tools(self, keep: Callable[[ToolDef], bool]) -> TurnRequestBuilder:
        """The same builder offering only the tools ``keep`` accepts."""
        return replace(self, tools=tuple(t for t in self.tools if keep(t)))

    def request(
        self,
        view: View | None = None,
        *,
        history: Sequence[Message] | None = None,
        then: Sequence[Message] = (),
    ) -> LlmRequest:
        """The request: system, ``view``'s summary, history window, options.

        Args:
            view: the conversation's LLM view (None: no summary, no history).
            history: ``repair_history(view.messages)`` when the caller keeps it already
                (:meth:`~beamclaw_core.loop.executor.ViewCache.history` repairs
                incrementally); it must be exactly that.
            then: messages after the view's (a flush's instructions and rounds),
                repaired together with it.
        """
        messages = list(self.system)
        if view is not None and view.summary:
            messages.append(summary_message(view.summary))
        if history is not None and not then:
            messages.extend(history)
        else:
            repair = HistoryRepair()
            if history is not None:
                repair.feed(history)
            elif view is not None:
                repair.feed(view.messages)
            messages.extend(repair.feed(then).result())
        return LlmRequest(messages, CompletionOptions(model=self.model, tools=self.tools))


async def next_turn(deps: LoopDeps) -> tuple[TurnRequestBuilder, View]:
    """The builder of the conversation's next turn request, and the view it is about.

    From the turn's own ports, so every caller gets what the turn sends: the system
    prompt of now, the tools the agent is offered (:meth:`ToolsPort.definitions
    <beamclaw_core.loop.ports.ToolsPort.definitions>`: the registry under its policy,
    then ``spawn_agents`` or ``submit_result``) and the model. The view is read first:
    the prompt's latest-message lookup then finds it loaded.
    """
    view = await deps.log.view()
    system = await deps.log.system_prompt()
    return TurnRequestBuilder(tuple(system), deps.tools.definitions(), deps.model.model), view
