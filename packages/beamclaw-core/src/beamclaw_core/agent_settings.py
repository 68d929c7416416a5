"""``[agents.<id>]``: what one agent runs on, with ``[core]`` as the fallback.

An agent chooses its provider (a name under ``[core.providers]``), a model overriding
that provider's for this agent only, and its autonomy level; its tool allow/deny list
lives in ``[tools.agents.<id>]``. Invariant: every unset key, and every agent not listed,
resolves exactly to the ``[core]`` defaults (``default_provider``, that provider's
``model``, ``autonomy_level``).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

from pydantic import Field, field_validator

from beamclaw_core.settings import CoreSettings
from beamclaw_obs import Section
from beamclaw_tools import Autonomy

HOURS_PATTERN = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)-([01]\d|2[0-3]):([0-5]\d)$")
"""``HH:MM-HH:MM`` (24 h clock); the end may be before the start (the window wraps)."""


class HeartbeatSettings(Section):
    """``[scheduler.heartbeat]``, and per agent ``[agents.<id>.heartbeat]`` (a key set
    there replaces the ``[scheduler.heartbeat]`` one for that agent): the agent's own
    periodic check-in, which costs nothing while ``HEARTBEAT.md`` lists no task."""

    enabled: bool = True
    """Beat at all (with ``[scheduler] enabled``); an idle beat makes no LLM call."""
    every_seconds: int = Field(default=1800, ge=1)
    """Seconds between beats."""
    active_hours: str | None = None
    """``"08:00-22:00"``: beat only inside this window of the person's local time
    (``[core] timezone``, else USER.md); ``"22:00-06:00"`` wraps past midnight. Unset:
    all day."""
    model: str | None = None
    """A cheaper model of the agent's provider for beats (e.g. ``"gpt-4o-mini"``); the
    person's turns keep the agent's model. Unset: the agent's model."""
    deliver_to: str = "last"
    """Where an answer that is not ``HEARTBEAT_OK`` goes: ``last`` (the channel the
    gateway's owner wrote from last; kept in the heartbeat session when none is known),
    ``telegram:<chat>``, ``webhook:<name>``, ``ws:<session>`` or ``silent`` (kept in the
    heartbeat session's history only)."""
    daily_cost_cap_usd: float | None = Field(default=None, ge=0)
    """Background spend (heartbeats and jobs of the agent, counted apart from people's
    turns) after which no more beats run that day (person's local day). None: no cap."""
    daily_token_cap: int | None = Field(default=None, ge=0)
    """Background tokens after which no more beats run that day. None: no cap."""
    explore_every: int = Field(default=0, ge=0)
    """Every Nth beat is an exploration (seed 004 ADR-058): one topic of ``CURIOSITY.md``
    not explored yet is followed and a short note written to ``explorations/``; its
    spend counts against the caps above. 0 = off."""
    explore_max_fetches: int = Field(default=3, ge=0, le=50)
    """URLs an exploration may fetch (``web_fetch``/``http_request`` calls), enforced by
    the tool layer: a call past it is refused."""
    max_failures: int = Field(default=2, ge=1)
    """Consecutive failed beats after which heartbeats pause until the gateway restarts
    or the person resumes them."""

    @field_validator("active_hours")
    @classmethod
    def _hours(cls, value: str | None) -> str | None:
        if value is not None and not HOURS_PATTERN.match(value):
            raise ValueError(f"active_hours is HH:MM-HH:MM, got {value!r}")
        return value

    def overridden_by(self, own: HeartbeatSettings | None) -> HeartbeatSettings:
        """These settings with every key ``own`` sets explicitly replaced."""
        if own is None:
            return self
        return self.model_copy(update={k: getattr(own, k) for k in own.model_fields_set})


class AgentSettings(Section):
    """``[agents.<id>]``: one agent's provider, model and autonomy (unset = ``[core]``)."""

    provider: str | None = None
    """Provider name under ``[core.providers]``; None = ``[core] default_provider``."""
    model: str | None = None
    """Model for this agent only, replacing its provider's ``model``; None = the provider's."""
    autonomy_level: Autonomy | None = None
    """``read_only``, ``supervised`` or ``full``; None = ``[core] autonomy_level``."""
    approval_mode: Literal["deny", "wait"] | None = None
    """How an API turn of this agent (``/v1``) treats a tool approval: ``deny`` at once,
    or ``wait`` for an answer from another front end (``/api/approvals``, ``/ws``, the
    TUI) until ``approval_timeout_seconds``; None = ``[gateway.api] approval_mode``. The
    request's ``X-Approval-Mode`` header beats both."""
    heartbeat: HeartbeatSettings | None = None
    """This agent's heartbeat keys over ``[scheduler.heartbeat]`` (see there)."""


@dataclass(frozen=True)
class AgentProfile:
    """An agent's resolved choices (see :func:`agent_profile`)."""

    agent_id: str
    provider: str
    model_override: str | None
    """The agent's own model, or None when it uses its provider's configured model."""
    autonomy: Autonomy

    def model(self, core: CoreSettings) -> str:
        """The model the agent's turns ask for ("" when its provider is not configured)."""
        if self.model_override is not None:
            return self.model_override
        settings = core.providers.get(self.provider)
        return settings.model if settings is not None else ""


_NO_SECTION = AgentSettings()
"""An agent without its own section (read only: every key unset)."""


def agent_profile(
    core: CoreSettings, agents: Mapping[str, AgentSettings], agent_id: str
) -> AgentProfile:
    """``agent_id``'s ``[agents.<id>]`` keys, each unset one taken from ``[core]``."""
    own = agents.get(agent_id) or _NO_SECTION
    return AgentProfile(
        agent_id=agent_id,
        provider=own.provider or core.default_provider,
        model_override=own.model or None,
        autonomy=own.autonomy_level or core.autonomy_level,
    )


def unknown_agent_providers(core: CoreSettings, agents: Mapping[str, AgentSettings]) -> list[str]:
    """One line per ``[agents.<id>] provider`` that names no ``[core.providers]`` section."""
    known = ", ".join(sorted(core.providers)) or "none"
    return [
        f"agents.{agent_id}.provider = {own.provider!r}: no [core.providers.{own.provider}] "
        f"section (configured: {known})"
        for agent_id, own in sorted(agents.items())
        if own.provider is not None and own.provider not in core.providers
    ]
