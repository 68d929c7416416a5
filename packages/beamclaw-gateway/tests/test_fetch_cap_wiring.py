"""The gateway puts its fetching tools under the exploration beats' fetch cap (issue 26)."""

from __future__ import annotations

from beamclaw_core.testing import Reply, ScriptedProvider
from beamclaw_scheduler import FETCH_TOOLS, CappedTool
from beamclaw_tools import SessionRef

from .conftest import gateway_config, live_gateway


async def test_fetch_tools_are_capped_once_the_scheduler_runs() -> None:
    config = gateway_config()
    config.scheduler.enabled = True
    async with live_gateway(ScriptedProvider([Reply("x")]), config) as gw:
        services = gw.app.state.services
        system = gw.runtime.system
        assert system is not None
        found = [system.tools.get(name) for name in FETCH_TOOLS]
        capped = [t for t in found if isinstance(t, CappedTool)]
        assert capped and len(capped) == len([t for t in found if t is not None])
        quota = services.scheduler.heartbeats.fetches
        session = SessionRef(session_id="heartbeat-default", agent_id="default", user_id="me")
        quota.open(session.session_id, 0)
        refused = await capped[0].execute({"url": "https://example.org"}, session)
        assert refused.is_error and "refused" in refused.content
        quota.close(session.session_id)
