"""A lane's request builder outside its turns: the memory flush and ``/context`` build
(or measure) exactly what the lane's next turn would send, from the same ports."""

from __future__ import annotations

from beamclaw_core.loop.request import TurnRequestBuilder, next_turn
from beamclaw_core.sessions.control import LaneAccess
from beamclaw_core.store import View


async def lane_request_builder(lane: LaneAccess) -> tuple[TurnRequestBuilder, View]:
    """The builder of ``lane``'s next turn request (:func:`next_turn` over the lane's
    ports) and the view it is about."""
    return await next_turn(lane.deps())
