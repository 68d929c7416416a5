"""Persistence of conversations: tables, the store, session ids."""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_core.store.conversations import ConversationStore
    from beamclaw_core.store.fencing import Fences, StaleOwnerError, stored_epoch
    from beamclaw_core.store.ids import USER_ENV, Sharing, derive_session_id, local_user_id
    from beamclaw_core.store.records import (
        MESSAGE,
        RESET,
        SUMMARY,
        ConversationRecord,
        PendingRunRecord,
        StoredMessage,
        UsageRow,
        View,
    )
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_core.store.conversations": ("ConversationStore",),
            "beamclaw_core.store.fencing": ("Fences", "StaleOwnerError", "stored_epoch"),
            "beamclaw_core.store.records": (
                "MESSAGE",
                "RESET",
                "SUMMARY",
                "ConversationRecord",
                "PendingRunRecord",
                "StoredMessage",
                "UsageRow",
                "View",
            ),
            "beamclaw_core.store.ids": (
                "USER_ENV",
                "Sharing",
                "derive_session_id",
                "local_user_id",
            ),
        },
    )

__all__ = [
    "MESSAGE",
    "RESET",
    "SUMMARY",
    "USER_ENV",
    "ConversationRecord",
    "ConversationStore",
    "Fences",
    "PendingRunRecord",
    "Sharing",
    "StaleOwnerError",
    "StoredMessage",
    "UsageRow",
    "View",
    "derive_session_id",
    "local_user_id",
    "stored_epoch",
]
