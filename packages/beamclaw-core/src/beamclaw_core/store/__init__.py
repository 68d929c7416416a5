"""Persistence of conversations: tables, the store, session ids."""

from beamclaw_core.store.conversations import (
    MESSAGE,
    RESET,
    SUMMARY,
    ConversationRecord,
    ConversationStore,
    PendingRunRecord,
    StoredMessage,
    View,
)
from beamclaw_core.store.ids import USER_ENV, Sharing, derive_session_id, local_user_id

__all__ = [
    "MESSAGE",
    "RESET",
    "SUMMARY",
    "USER_ENV",
    "ConversationRecord",
    "ConversationStore",
    "PendingRunRecord",
    "Sharing",
    "StoredMessage",
    "View",
    "derive_session_id",
    "local_user_id",
]
