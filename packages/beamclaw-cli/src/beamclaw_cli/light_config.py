"""The few configuration keys light commands need, read without the whole configuration.

Loading every package's section (``beamclaw_gateway.load_config``) builds about sixty
models and imports pydantic-settings and the rate-limit library: more than the rest of
``beamclaw status`` or ``beamclaw agent list``. These read their keys alone with
:func:`~beamclaw_obs.read_section` (the file, then the ``BEAMCLAW_…`` overrides, as the
full loader reads them). They check only what they read; the gateway checks the rest.
"""

from __future__ import annotations

from pathlib import Path

from beamclaw_core.workspace.names import DEFAULT_AGENT
from beamclaw_obs import Section, read_section


class DefaultAgentKey(Section):
    """``[core] default_agent`` alone; its default is the core's (a test compares them)."""

    default_agent: str = DEFAULT_AGENT


def default_agent(config: Path | None = None) -> str:
    """The configured default agent's name."""
    return read_section(("core",), DefaultAgentKey, config).default_agent


def gateway_address(config: Path | None = None) -> tuple[str, int]:
    """The gateway's ``(host, port)``: ``[gateway.http]``, then ``BEAMCLAW_PORT``."""
    from beamclaw_gateway.settings import HttpSettings, listen_port

    http = read_section(("gateway", "http"), HttpSettings, config)
    return http.host, listen_port(http)
