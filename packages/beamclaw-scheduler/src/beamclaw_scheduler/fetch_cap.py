"""The fetch cap of exploration beats, enforced by the tool layer (issue 26).

:class:`CappedTool` wraps a fetching tool (``web_fetch``, ``http_request``) in the
registry; :class:`FetchQuota` holds the fetches each capped session has left. A session
with no quota (every conversation but a running exploration) passes straight through; in
a session with one, each call takes one fetch, and a call once none is left is refused
with a tool error and never reaches the wrapped tool.
"""

from __future__ import annotations

from typing import Any

from beamclaw_tools import SessionRef, Tool, ToolDef, ToolOutput

FETCH_TOOLS = ("web_fetch", "http_request")
"""The registry's tools that fetch a URL (each call counts as one fetch)."""


class FetchQuota:
    """Fetches left per session (see the module)."""

    def __init__(self) -> None:
        self._left: dict[str, int] = {}
        self.refused: dict[str, int] = {}
        """Calls refused per session since its quota opened."""

    def open(self, session_id: str, fetches: int) -> None:
        """Allow ``session_id`` ``fetches`` fetches from now on."""
        self._left[session_id] = fetches
        self.refused[session_id] = 0

    def close(self, session_id: str) -> None:
        """Lift the cap of ``session_id``."""
        self._left.pop(session_id, None)

    def take(self, session_id: str) -> bool:
        """One fetch for ``session_id``: True when allowed (always, without a quota)."""
        left = self._left.get(session_id)
        if left is None:
            return True
        if left <= 0:
            self.refused[session_id] = self.refused.get(session_id, 0) + 1
            return False
        self._left[session_id] = left - 1
        return True


class CappedTool:
    """``inner`` under ``quota`` (same definition; see the module)."""

    def __init__(self, inner: Tool, quota: FetchQuota) -> None:
        self.inner = inner
        self.quota = quota
        self.definition: ToolDef = inner.definition

    async def execute(self, args: dict[str, Any], session: SessionRef) -> ToolOutput:
        if not self.quota.take(session.session_id):
            return ToolOutput.error(
                f"{self.definition.name} refused: this exploration has used all the "
                "fetches it may make; write your note from what you have"
            )
        return await self.inner.execute(args, session)
