"""How commands reach a home's data: its database directly, or the gateway that holds it.

Reading (``sessions list``, ``approvals list``) opens the database named by ``[memory]
database_url`` (default ``$BEAMCLAW_HOME/beamclaw.db``), migrated first, whether or not a
daemon runs. Changing what a running gateway holds in memory (deleting a session,
revoking a grant) goes through that gateway's REST API instead, so its live state and
the database never disagree.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from beamclaw_cli.errors import BeamclawCliError

if TYPE_CHECKING:
    import httpx

    from beamclaw_memory import Database

T = TypeVar("T")


def with_database(config: Path | None, action: Callable[[Database], Awaitable[T]]) -> T:
    """Run ``action`` on the home's migrated database and close it afterwards."""

    async def run() -> T:
        from beamclaw_gateway import load_config
        from beamclaw_memory import Database, resolve_database_url
        from beamclaw_obs import beamclaw_home, ensure_home

        cfg = load_config(config).settings
        home = ensure_home(beamclaw_home())
        database = Database(resolve_database_url(cfg.memory.database_url, home))
        try:
            await database.migrate()
            return await action(database)
        finally:
            await database.dispose()

    import asyncio  # here, not at import: the CLI's other commands never need it

    return asyncio.run(run())


def gateway_delete(config: Path | None, path: str, pid: int) -> httpx.Response:
    """``DELETE`` ``path`` (e.g. ``/api/sessions/ID``) on the gateway holding the home
    (process ``pid``), with the gateway token when one is configured. Raises
    :class:`BeamclawCliError` when the gateway does not answer; any answer is returned."""
    return gateway_request(config, "DELETE", path, pid)


def gateway_request(
    config: Path | None, method: str, path: str, pid: int, body: object | None = None
) -> httpx.Response:
    """``method`` ``path`` (JSON ``body``) on the gateway holding the home, as
    :func:`gateway_delete` does."""
    import httpx

    from beamclaw_cli.daemon import Endpoint
    from beamclaw_gateway import effective_port, load_config

    cfg = load_config(config).settings
    endpoint = Endpoint(cfg.gateway.http.host, effective_port(cfg))
    secret = cfg.gateway.http.token
    headers = {"Authorization": f"Bearer {secret.resolve('the gateway token')}"} if secret else {}
    try:
        return httpx.request(
            method, endpoint.base_url + path, headers=headers, json=body, timeout=30.0
        )
    except httpx.TransportError as e:
        raise BeamclawCliError(
            f"a gateway (pid {pid}) holds this home but does not answer at {endpoint.base_url}: {e}"
        ) from e
