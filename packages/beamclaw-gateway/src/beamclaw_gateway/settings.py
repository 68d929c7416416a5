"""The ``[gateway]`` configuration section."""

from __future__ import annotations

from typing import Literal

from pydantic import Field, field_validator, model_validator

from beamclaw_gateway.listen_port import DEFAULT_HOST, DEFAULT_PORT, MAX_PORT, port_over
from beamclaw_gateway.rates import parse_rates
from beamclaw_obs import Secret, Section


class HttpSettings(Section):
    """``[gateway.http]``: the HTTP listener."""

    host: str = DEFAULT_HOST
    """Bind address. A non-loopback address requires ``token``."""
    port: int = Field(default=DEFAULT_PORT, ge=0, le=MAX_PORT)
    """TCP port; ``BEAMCLAW_PORT`` overrides. 0 picks a free port."""
    token: Secret | None = None
    """Bearer token for ``/v1``, ``/api``, ``/ws`` and A2A (``{ env = "VAR" }``)."""
    metrics_public: bool = True
    """Serve ``/metrics`` without a token (loopback deployments); False requires it."""
    max_body_bytes: int = Field(default=8 * 1_048_576, ge=1024)
    """Largest accepted request body; a bigger one is answered 413 before it is read
    (8 MiB: room for one image at ``[core.attachments] max_image_bytes`` in base64)."""
    shutdown_grace_seconds: int = Field(default=10, ge=1)
    """On stop (SIGTERM, Ctrl-C), how long requests still open may run before they are
    cut: a ``/v1`` turn waiting for an approval, a stream. Their turns are persisted and
    go on at the next start (a pending approval is asked again)."""
    trust_forwarded_for: bool = False
    """Take the client IP from ``X-Forwarded-For`` (only behind a trusted reverse proxy)."""
    loop: Literal["auto", "uvloop", "asyncio"] = "auto"
    """Event loop of ``beamclaw serve``: ``auto`` = uvloop where installed (Linux, macOS;
    about 0.5 ms less per turn), else asyncio's own."""


def listen_port(http: HttpSettings) -> int:
    """``BEAMCLAW_PORT`` if set, else ``[gateway.http] port``."""
    return port_over(http.port)


class RateLimitSettings(Section):
    """``[gateway.rate_limit]``: moving-window limits on every external entry point."""

    enabled: bool = True
    """False turns rate limiting off entirely."""
    per_ip: str = "120/minute"
    """Protective limit per client IP, in ``limits`` notation (``"10/second; 120/minute"``):
    for clients that are neither loopback nor authenticated, and for every request
    presenting a wrong bearer token (brute force), loopback included."""
    per_loopback: str = "6000/minute"
    """Limit per loopback IP (``127.0.0.0/8``, ``::1``) presenting no wrong token: local
    scripts, the TUI, the web UI. Behind a reverse proxy on the same host set
    ``[gateway.http] trust_forwarded_for`` or every client counts as loopback."""
    per_token: str = "6000/minute"  # noqa: S105 - a rate, not a password
    """Limit per valid bearer token (hashed): authenticated clients from any address."""
    storage_uri: str = "memory://"
    """``memory://`` (one process) or ``redis://host:port/db`` (shared by gateway nodes)."""
    exempt_paths: list[str] = Field(default_factory=lambda: ["/health", "/ready", "/metrics"])
    """Paths (exact) that are never limited: probes and scrapes."""

    @field_validator("per_ip", "per_loopback", "per_token")
    @classmethod
    def _parses(cls, value: str) -> str:
        try:
            parse_rates(value)
        except ValueError as exc:
            raise ValueError(f"not a rate limit in limits notation: {value!r}") from exc
        return value

    @field_validator("storage_uri")
    @classmethod
    def _known_storage(cls, value: str) -> str:
        if not value.startswith(("memory://", "redis://", "rediss://")):
            raise ValueError("storage_uri is memory://, redis://… or rediss://…")
        return value


class WebhookSourceSettings(Section):
    """``[gateway.webhooks.<source>]``: one generic webhook sender (``/webhook/<source>``)."""

    secret: Secret
    """Shared secret the sender presents (``{ env = "VAR" }``); compared in constant time."""
    header: str | None = "X-Webhook-Secret"
    """Request header carrying the secret (None: only ``body_field`` is accepted)."""
    body_field: str | None = None
    """Top-level JSON body field carrying the secret; removed before the agent sees it."""
    agent: str | None = None
    """Agent that receives this source's events (None: ``[core] default_agent``)."""
    user: str | None = None
    """Session user for this source (None: ``webhook:<source>``)."""


class OutboundWebhookSettings(Section):
    """``[gateway.outbound_webhooks.<name>]``: a URL the ``webhook`` channel delivers to
    (``deliver_to = "webhook:<name>"``, ``POST /api/deliver`` with channel ``webhook``).

    Each delivery is a JSON ``POST`` of ``{"channel", "target", "text", "sent_at"}``
    signed with ``secret``: header ``X-Beamclaw-Signature: sha256=<hex>`` is the
    HMAC-SHA256 of ``<X-Beamclaw-Timestamp>.<body>``, so a receiver checks both origin
    and freshness."""

    url: str
    """Where to ``POST`` (``http://`` or ``https://``)."""
    secret: Secret
    """Shared HMAC key (``{ env = "VAR" }``)."""
    timeout_seconds: float = Field(default=10.0, gt=0)
    """Longest a delivery may take; a timeout or a non-2xx answer is a failed delivery."""

    @field_validator("url")
    @classmethod
    def _http(cls, value: str) -> str:
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"url must be http:// or https://, got {value!r}")
        return value


class A2ASettings(Section):
    """``[gateway.a2a]``: the Agent-to-Agent (A2A) JSON-RPC endpoint."""

    enabled: bool = True
    """Serve ``/.well-known/agent.json`` and ``POST /a2a``."""
    agent: str | None = None
    """Agent answering A2A tasks (None: ``[core] default_agent``)."""
    public_url: str | None = None
    """URL peers use to reach this gateway (None: derived from the request)."""


class ApiSettings(Section):
    """``[gateway.api]``: behaviour of the OpenAI-compatible API."""

    idempotency_ttl_seconds: int = Field(default=86_400, ge=60)
    """How long an ``Idempotency-Key`` answer is kept and replayed."""
    idempotency_lease_seconds: float = Field(default=15.0, gt=0)
    """How long a running ``Idempotency-Key`` stays its gateway's after that gateway's
    last sign of life (refreshed every third of it). A key whose gateway died (kill -9,
    crash) is settled once this lapsed: replayed when its turn committed, else released."""
    approval_mode: Literal["deny", "wait"] = "deny"
    """Tool approvals inside ``/v1`` turns: ``deny`` answers no at once; ``wait`` leaves
    them for another client (``/ws``) until ``approval_timeout_seconds``.
    ``X-Approval-Mode`` overrides per request."""


class WebSocketSettings(Section):
    """``[gateway.ws]``: the ``/ws`` protocol."""

    ping_interval_seconds: float = Field(default=20.0, gt=0)
    """WebSocket protocol-level ping interval; a peer that does not answer a ping within
    the same time is disconnected."""
    send_buffer: int = Field(default=1024, ge=8)
    """Frames queued per connection; a client that falls this far behind is disconnected
    (its turns continue and are persisted)."""
    auth_timeout_seconds: float = Field(default=10.0, gt=0)
    """Time allowed for the first ``auth`` frame when no Authorization header was sent."""
    dedupe_window: int = Field(default=1024, ge=1)
    """How many recent ``(user, message id)`` pairs are remembered to drop duplicates."""


class TranscriptionSettings(Section):
    """``[gateway.channels.telegram.transcription]``: speech to text for voice and audio
    messages, through an OpenAI-compatible ``POST {base_url}/audio/transcriptions``."""

    base_url: str | None = None
    """The endpoint's base URL (``https://api.openai.com/v1``); None: voice messages are
    answered with a note that transcription is not configured."""
    api_key: Secret | None = None
    """Bearer key for the endpoint (``{ env = "OPENAI_API_KEY" }``); None: sent without."""
    model: str = "whisper-1"
    """The ``model`` form field."""
    timeout_seconds: float = Field(default=60.0, gt=0)


class TelegramSettings(Section):
    """``[gateway.channels.telegram]``: the Telegram bot channel (docs/telegram.md)."""

    enabled: bool = False
    """Run the Telegram channel (needs ``token``)."""
    token: Secret | None = None
    """The bot token from @BotFather (``{ env = "TELEGRAM_BOT_TOKEN" }``)."""
    mode: Literal["long_poll", "webhook"] = "long_poll"
    """``long_poll``: the gateway asks Telegram for updates (after ``deleteWebhook``);
    ``webhook``: Telegram posts them to ``webhook_url`` (``/webhook/telegram``)."""
    api_base_url: str = "https://api.telegram.org"
    """Where every Bot API call and file download goes (a local Bot API server, an
    emulator)."""
    dm_policy: Literal["open", "allowlist", "pairing"] = "pairing"
    """Who may talk to the bot in a private chat: ``open`` anyone; ``allowlist`` only
    ``allowlist`` and approved accounts; ``pairing`` strangers get a code that
    ``beamclaw pair telegram CODE`` approves."""
    allowlist: list[str] = Field(default_factory=list)
    """Telegram user ids (``"123456"``) or usernames (``"@ann"``) always let in."""
    group_policy: Literal["mention", "all", "off"] = "mention"
    """Groups: ``mention`` answers only when the bot is mentioned or replied to, ``all``
    every message, ``off`` never. A group is one session of its own."""
    group_allowlist: list[str] = Field(default_factory=list)
    """Group chat ids answered (empty: any group the bot is in)."""
    agent: str | None = None
    """Agent answering on Telegram (None: ``[core] default_agent``)."""
    agents: dict[str, str] = Field(default_factory=dict)
    """Agent per person (person id, or ``tg:<user id>``, to agent id); a pairing approved
    with ``--agent`` adds one."""
    webhook_url: str | None = None
    """Public HTTPS URL Telegram posts updates to in ``webhook`` mode (ending in
    ``/webhook/telegram``)."""
    webhook_secret: Secret | None = None
    """The ``secret_token`` given to ``setWebhook``, checked on every webhook request
    (``X-Telegram-Bot-Api-Secret-Token``); required in ``webhook`` mode."""
    poll_timeout_seconds: int = Field(default=30, ge=1, le=50)
    """Long-poll ``timeout``; a poll making no progress for twice this is restarted."""
    edit_interval_seconds: float = Field(default=1.0, ge=0.2)
    """Least time between two edits of a streamed draft (Telegram allows about one per
    second per chat)."""
    max_file_bytes: int = Field(default=20_000_000, ge=1)
    """Largest photo, document or voice message downloaded (the Bot API's own cap is
    20 MB), and largest file of a tool sent (Telegram's own cap is 50 MB); bigger ones
    are refused with a reply, or replaced by a note saying so."""
    transcription: TranscriptionSettings = Field(default_factory=TranscriptionSettings)

    @model_validator(mode="after")
    def _complete(self) -> TelegramSettings:
        if self.enabled and self.token is None:
            raise ValueError('enabled = true needs token = { env = "TELEGRAM_BOT_TOKEN" }')
        if (
            self.enabled
            and self.mode == "webhook"
            and (self.webhook_url is None or self.webhook_secret is None)
        ):
            raise ValueError('mode = "webhook" needs webhook_url and webhook_secret')
        return self


class TuiSettings(Section):
    """``[gateway.channels.tui]``."""

    enabled: bool = True
    """The TUI channel is always on; ``false`` is refused (turning it off is not
    available yet)."""


class ChannelsSettings(Section):
    telegram: TelegramSettings = Field(default_factory=TelegramSettings)
    tui: TuiSettings = Field(default_factory=TuiSettings)


class GatewaySettings(Section):
    """``[gateway]``: HTTP API and channels."""

    http: HttpSettings = Field(default_factory=HttpSettings)
    rate_limit: RateLimitSettings = Field(default_factory=RateLimitSettings)
    api: ApiSettings = Field(default_factory=ApiSettings)
    ws: WebSocketSettings = Field(default_factory=WebSocketSettings)
    a2a: A2ASettings = Field(default_factory=A2ASettings)
    webhooks: dict[str, WebhookSourceSettings] = Field(default_factory=dict)
    """Generic webhook sources by name; a source not listed here is refused (404).
    ``telegram`` is reserved (``/webhook/telegram`` is the Telegram channel's)."""
    outbound_webhooks: dict[str, OutboundWebhookSettings] = Field(default_factory=dict)
    """Outbound webhooks by name: the targets of the ``webhook`` channel. Not under
    ``[gateway.webhooks]``, whose names are inbound sources."""
    channels: ChannelsSettings = Field(default_factory=ChannelsSettings)
    gc_threshold: int = Field(default=10_000, ge=0)
    """Net container allocations between the garbage collector's young-generation
    passes while the gateway runs (Python's own: 700); 0 keeps the interpreter's."""
    gc_freeze: bool = True
    """Once started, keep what start-up built out of the collector's passes
    (``gc.freeze()``; undone when the gateway stops)."""
    heap_trim_seconds: float = Field(default=30.0, ge=0)
    """Every this many seconds, collect the garbage cycles that reached the collector's
    old generation (a full pass on the event loop, tens of ms; one due while turns run
    waits for a quiet moment, at most one more period), then give the heap
    memory the process freed back to the operating system (glibc's ``malloc_trim``;
    nothing on other C libraries); 0: never. Without it RSS keeps rising under load
    (docs/faults.md, *Soak*)."""

    @field_validator("webhooks")
    @classmethod
    def _telegram_reserved(
        cls, value: dict[str, WebhookSourceSettings]
    ) -> dict[str, WebhookSourceSettings]:
        if "telegram" in value:
            raise ValueError(
                "[gateway.webhooks.telegram]: the name is reserved for the Telegram channel "
                '([gateway.channels.telegram] mode = "webhook")'
            )
        return value
