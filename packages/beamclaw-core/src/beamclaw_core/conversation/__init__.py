"""The front ends' one way in: the :class:`Conversation` port and its in-process
implementation (:mod:`beamclaw_core.conversation.port`, :mod:`~.local`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_core.conversation.local import DetachedTurn, LocalConversation
    from beamclaw_core.conversation.port import (
        AnswerOutcome,
        ApprovalMode,
        Conversation,
        EventStream,
        HistoryEntry,
        HistoryPage,
        OnDone,
        OnEvent,
        PendingApprovalInfo,
        Turn,
        TurnRequest,
    )
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_core.conversation.local": ("DetachedTurn", "LocalConversation"),
            "beamclaw_core.conversation.port": (
                "AnswerOutcome",
                "ApprovalMode",
                "Conversation",
                "EventStream",
                "HistoryEntry",
                "HistoryPage",
                "OnDone",
                "OnEvent",
                "PendingApprovalInfo",
                "Turn",
                "TurnRequest",
            ),
        },
    )

__all__ = [
    "AnswerOutcome",
    "ApprovalMode",
    "Conversation",
    "DetachedTurn",
    "EventStream",
    "HistoryEntry",
    "HistoryPage",
    "LocalConversation",
    "OnDone",
    "OnEvent",
    "PendingApprovalInfo",
    "Turn",
    "TurnRequest",
]
