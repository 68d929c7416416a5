"""The ``[core]`` configuration section."""

from __future__ import annotations

from collections.abc import Mapping
from typing import ClassVar, Literal

from pydantic import Field

from beamclaw_core.attachments import DEFAULT_MAX_IMAGE_BYTES, DEFAULT_MAX_IMAGES, ImageLimits
from beamclaw_core.providers.settings import ProviderSettings
from beamclaw_obs import Secret, Section
from beamclaw_tools import Autonomy


def _default_providers() -> dict[str, ProviderSettings]:
    return {
        "openrouter": ProviderSettings(
            kind="openai",
            api_key=Secret(env="OPENROUTER_API_KEY"),
            base_url="https://openrouter.ai/api/v1",
            model="anthropic/claude-sonnet-4-5",
        ),
        "openai": ProviderSettings(
            kind="openai",
            api_key=Secret(env="OPENAI_API_KEY"),
            base_url="https://api.openai.com/v1",
            model="gpt-4o",
        ),
    }


class AgenticLoopSettings(Section):
    """``[core.agentic_loop]``."""

    replaced_keys: ClassVar[Mapping[str, str]] = {
        "stream_chunk_size": "replaced by stream_coalesce_ms: streamed text is no longer"
        " buffered by size"
    }

    max_tool_iterations: int = Field(default=15, ge=1)
    compaction_threshold_pct: int = Field(default=80, ge=1, le=100)
    compaction_target_pct: int = Field(default=40, ge=1, le=100)
    stream_coalesce_ms: float = Field(default=5.0, ge=0)
    """Streamed answer text is forwarded as it arrives, at most one draft per this many
    milliseconds (what arrives meanwhile is sent together when the window closes); 0 =
    every delta at once. Never buffered by size."""
    max_attempts: int = Field(default=3, ge=1)
    """LLM attempts per request (1 = no retry) for retryable errors (429, 5xx, timeouts)."""
    retry_base_delay_seconds: float = Field(default=1.0, ge=0)
    retry_max_delay_seconds: float = Field(default=30.0, ge=0)
    retry_after_cap_seconds: float = Field(default=120.0, ge=0)
    """A server's Retry-After is honoured up to this many seconds."""
    turn_timeout_seconds: float | None = Field(default=900.0, gt=0)
    """Wall-clock bound of one turn; None = unbounded."""
    max_tokens_per_turn: int | None = Field(default=None, ge=1)
    approval_timeout_seconds: float = Field(default=300.0, gt=0)
    compaction_provider: str | None = None
    """Provider (name under ``[core.providers]``) that writes summaries; None = the agent's."""
    compaction_model: str | None = None
    """Model for summaries; None = the provider's configured model."""
    memory_flush: bool = True
    """Before compacting, give the model one hidden turn to save durable facts."""
    memory_flush_timeout_seconds: float = Field(default=60.0, gt=0)
    """Bound of one memory flush (before compaction, on ``/new``); past it the flush is
    abandoned and reported, and ``/new`` still starts a fresh session."""
    max_subagents: int = Field(default=5, ge=1)
    subagent_timeout_seconds: float = Field(default=600.0, gt=0)
    turn_starts: int = Field(default=4, ge=0)
    """Turns of the process that prepare their first model call at once (the message
    committed, memory searched, the prompt built); more wait their turn, so that answers
    already streaming keep flowing while many turns start together. A turn gives its slot
    back as it calls the model. 0 = no bound."""


class QueueSettings(Section):
    """``[core.queue]``: what happens to messages that arrive while a turn runs (seed 004)."""

    mode: Literal["followup", "collect", "interrupt"] = "collect"
    """followup: FIFO, one turn each; collect: merged into one turn; interrupt: cancel + run."""
    cap: int = Field(default=20, ge=1)
    """Queued messages per session; beyond it the oldest is dropped and its sender told."""
    debounce_ms: int = Field(default=1000, ge=0)
    """collect mode: wait this long for more messages before draining."""


class SessionResetSettings(Section):
    """``[core.reset]``: automatic session resets (seed 004 ADR-038)."""

    daily_hour: int | None = Field(default=4, ge=0, le=23)
    """Local hour after which a session last active before it starts fresh; None = off."""
    idle_minutes: int | None = Field(default=None, ge=1)
    """Start fresh after this long without activity; None = off. The same idle reset as
    ``[core] session_ttl_seconds``: the smaller of the two limits set applies."""


class ShortTermSettings(Section):
    """``[core.short_term]``: short-term memory across resets (seed 004 ADR-056)."""

    enabled: bool = True
    """Carry the last exchanges before a reset into the new session, as one delimited
    system message of the LLM view (never stored)."""
    exchanges: int = Field(default=20, ge=1, le=200)
    """How many user/assistant exchanges are carried (the newest)."""
    max_chars_per_message: int = Field(default=400, ge=20)
    """Each carried message is cut to this many characters."""


class MaintenanceSettings(Section):
    """``[core.maintenance]``: compaction outside turns."""

    idle_compaction_minutes: int | None = Field(default=60, ge=1)
    """Compact a session idle this long whose view is above the target; None = off."""
    nightly_hour: int | None = Field(default=3, ge=0, le=23)
    """Local hour of the nightly compaction pass over every session; None = off."""
    check_interval_seconds: float = Field(default=60.0, gt=0)
    session_cleanup_interval_seconds: float = Field(default=300.0, gt=0)
    """How often the retention pass deletes history older than ``[core]
    history_retention_days`` (only when that is set)."""
    lane_idle_seconds: float = Field(default=300.0, gt=0)
    """A session's in-memory lane idle this long (no turn, nothing queued, no approval
    pending, no open subscription) is dropped; the next message rebuilds it from the store."""


class RestartSettings(Section):
    """``[core.restart]``: the per-session loop supervisor's restart budget."""

    max_restarts: int = Field(default=3, ge=0)
    window_seconds: float = Field(default=60.0, gt=0)
    backoff_seconds: float = Field(default=0.1, ge=0)


ImageType = Literal["image/png", "image/jpeg", "image/gif", "image/webp"]


class AttachmentSettings(Section):
    """``[core.attachments]``: images people send and tools return (docs/loop.md).

    One check for both directions: a front end refuses a message that breaks these
    limits (a 4xx naming the limit); a tool's image that breaks them is replaced by a
    note the model reads."""

    max_image_bytes: int = Field(default=DEFAULT_MAX_IMAGE_BYTES, ge=1)
    """Largest image accepted, decoded (default 5 MB)."""
    max_images_per_message: int = Field(default=DEFAULT_MAX_IMAGES, ge=0)
    """Most images in one message (a person's, or one tool result); 0 refuses images."""
    image_types: list[ImageType] = Field(
        default_factory=lambda: ["image/png", "image/jpeg", "image/gif", "image/webp"]
    )
    """Media types accepted (the data must really be of its declared type)."""

    def limits(self) -> ImageLimits:
        return ImageLimits(
            max_bytes=self.max_image_bytes,
            max_per_message=self.max_images_per_message,
            media_types=frozenset(self.image_types),
        )


class CoreSettings(Section):
    """``[core]``: providers, agents, sessions and the agentic loop."""

    default_provider: str = "openrouter"
    default_agent: str = "default"
    autonomy_level: Autonomy = Autonomy.SUPERVISED
    session_ttl_seconds: int = Field(default=3600, ge=0)
    """A session idle longer than this starts a fresh context at its next message (a reset
    marker; the history stays, listed and searchable); 0 = never. The same idle reset as
    ``[core.reset] idle_minutes``: the smaller of the two limits set applies."""
    history_retention_days: int | None = Field(default=None, ge=0)
    """Delete sessions (messages, runs, sub-agent children) whose last activity is older
    than this many days; None or 0 = keep history forever. Off by default: history is
    otherwise deleted only explicitly (``DELETE /api/sessions/{id}``,
    ``beamclaw sessions delete``)."""
    session_sharing: Literal["shared", "per_channel"] = "shared"
    event_replay: int = Field(default=512, ge=0, le=100_000)
    """Events each session keeps numbered (``seq``) while its lane is in memory, so a
    client that reconnects (``/ws`` ``subscribe`` with ``after_seq``) receives what it
    missed exactly once; an older number is answered ``replay_gap`` (reload the history).
    At most the subscriber buffer minus one."""
    timezone: str | None = None
    """The user's IANA timezone (e.g. ``"Europe/Berlin"``) for the system prompt's local
    time and which daily logs are "today"/"yesterday". Unset (or not a valid name): the
    ``Timezone:`` line of the agent's USER.md, else UTC (docs/workspaces.md)."""
    providers: dict[str, ProviderSettings] = Field(default_factory=_default_providers)
    agentic_loop: AgenticLoopSettings = Field(default_factory=AgenticLoopSettings)
    queue: QueueSettings = Field(default_factory=QueueSettings)
    reset: SessionResetSettings = Field(default_factory=SessionResetSettings)
    short_term: ShortTermSettings = Field(default_factory=ShortTermSettings)
    maintenance: MaintenanceSettings = Field(default_factory=MaintenanceSettings)
    restart: RestartSettings = Field(default_factory=RestartSettings)
    attachments: AttachmentSettings = Field(default_factory=AttachmentSettings)
    daily_cost_budget_usd: float | None = Field(default=None, ge=0)
    """Per agent, per local day; reaching it ends turns with a message. None = no budget."""


def describe_llm_provider(core: CoreSettings) -> tuple[bool, str]:
    """One line saying which LLM provider BeamClaw will use, or how to configure one.

    Returns ``(usable, line)``; ``usable`` is False when no provider can be called yet.
    """
    name = core.default_provider
    provider = core.providers.get(name)
    if provider is None:
        known = ", ".join(sorted(core.providers)) or "none"
        return False, (
            f"LLM provider: default_provider {name!r} is not configured (configured: {known}); "
            f"add [core.providers.{name}] to beamclaw.toml"
        )
    where = f"{provider.kind} wire, model {provider.model} at {provider.base_url}"
    if provider.api_key is None:
        return True, f"LLM provider: {name} ({where}, no API key)"
    if provider.api_key.is_available():
        return True, f"LLM provider: {name} ({where}, key from {provider.api_key.describe()})"
    problem = (provider.api_key.problem() or "no key").removeprefix("environment variable ")
    also = f" (or {provider.api_key.fix()})" if provider.api_key.env is not None else ""
    return False, (
        f"LLM provider: {name} ({where}) - {problem}: run `beamclaw onboard` to choose a "
        f"provider and store its key{also}"
    )
