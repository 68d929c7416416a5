"""The outbound ``webhook`` channel: delivery to the URLs of
``[gateway.outbound_webhooks.<name>]`` (target = ``<name>``), signed with each one's secret.

Invariants: a target that is not configured is :class:`UnknownTargetError` (nothing is
sent); the body is JSON and its HMAC-SHA256 signature covers the timestamp and the exact
bytes sent; an outbound message with a ``delivery_id`` carries it in
:data:`DELIVERY_HEADER` and ``Idempotency-Key`` (every retry of one answer the same); a
delivery that does not reach a 2xx answer within ``timeout_seconds`` raises
:class:`WebhookDeliveryError` (the scheduler retries it from its outbox). The channel
has no inbound side: ``run`` only waits to be cancelled. aiohttp is imported on the
first delivery, not when the gateway starts.
"""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import time
from collections.abc import Mapping
from typing import Any

from beamclaw_core.channels import (
    ChannelCaps,
    ChannelError,
    InboundSink,
    Outbound,
    Receipt,
    UnknownTargetError,
)
from beamclaw_core.loop import ApprovalRequested
from beamclaw_gateway.errors import BeamclawGatewayError
from beamclaw_gateway.settings import OutboundWebhookSettings
from beamclaw_obs import ComponentHealth, HealthState, MissingSecretError

NAME = "webhook"
SIGNATURE_HEADER = "X-Beamclaw-Signature"
TIMESTAMP_HEADER = "X-Beamclaw-Timestamp"
DELIVERY_HEADER = "X-Beamclaw-Delivery"
"""The delivery's stable id (also sent as ``Idempotency-Key``): the same on every retry
of one answer, so the receiver drops a repeat."""


class WebhookDeliveryError(BeamclawGatewayError, ChannelError):
    """A webhook did not accept a delivery (network error, timeout, non-2xx status)."""

    def __init__(self, target: str, reason: str) -> None:
        self.target = target
        self.reason = reason
        super().__init__(f"webhook {target!r}: {reason}")


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """``sha256=<hex>`` of HMAC-SHA256(secret, ``<timestamp>.<body>``)."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256)
    return "sha256=" + digest.hexdigest()


class WebhookChannel:
    """The ``webhook`` :class:`~beamclaw_core.channels.ChannelAdapter` (see the module)."""

    def __init__(self, targets: Mapping[str, OutboundWebhookSettings]) -> None:
        self._targets = dict(targets)
        self.delivered = 0
        self.failed = 0
        self.last_error: str | None = None

    @property
    def name(self) -> str:
        return NAME

    @property
    def capabilities(self) -> ChannelCaps:
        return ChannelCaps()

    def targets(self) -> list[str]:
        return sorted(self._targets)

    async def run(self, inbound: InboundSink) -> None:
        await asyncio.Event().wait()  # outbound only: live until cancelled

    async def deliver(self, target: str, out: Outbound) -> Receipt:
        config = self._targets.get(target)
        if config is None:
            raise UnknownTargetError(NAME, target)
        try:
            secret = config.secret.resolve(f"outbound webhook {target}")
        except MissingSecretError as exc:
            self._failed(str(exc))
            raise WebhookDeliveryError(target, f"its secret is not set ({exc})") from exc
        payload: dict[str, Any] = {
            "channel": NAME,
            "target": target,
            "text": out.text,
            "sent_at": time.time(),
        }
        body = json.dumps(payload, ensure_ascii=False).encode()
        stamp = str(int(payload["sent_at"]))
        headers = {
            "Content-Type": "application/json",
            TIMESTAMP_HEADER: stamp,
            SIGNATURE_HEADER: signature(secret, stamp, body),
        }
        if out.delivery_id is not None:
            headers[DELIVERY_HEADER] = out.delivery_id
            headers["Idempotency-Key"] = out.delivery_id
        try:
            status = await _post(config.url, body, headers, config.timeout_seconds)
        except _PostError as exc:
            self._failed(exc.reason)
            raise WebhookDeliveryError(target, exc.reason) from exc
        if not 200 <= status < 300:
            self._failed(f"HTTP {status}")
            raise WebhookDeliveryError(target, f"answered HTTP {status}")
        self.delivered += 1
        return Receipt(NAME, target, 1)

    async def ask_approval(self, target: str, request: ApprovalRequested) -> None:
        await self.deliver(
            target,
            Outbound(f"Approval needed for {request.tool} (answer in the TUI or /api/approvals)."),
        )

    def health(self) -> ComponentHealth:
        return ComponentHealth(
            HealthState.UP,
            data={
                "targets": self.targets(),
                "delivered": self.delivered,
                "failed": self.failed,
                "last_error": self.last_error,
            },
        )

    def _failed(self, reason: str) -> None:
        self.failed += 1
        self.last_error = reason


class _PostError(Exception):
    def __init__(self, reason: str) -> None:
        self.reason = reason
        super().__init__(reason)


async def _post(url: str, body: bytes, headers: dict[str, str], limit_seconds: float) -> int:
    """The answer's status; :class:`_PostError` for any transport failure (aiohttp's
    errors do not leave this function)."""
    import aiohttp

    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=limit_seconds)) as session,
            session.post(url, data=body, headers=headers) as response,
        ):
            await response.read()
            return response.status
    except (aiohttp.ClientError, OSError, TimeoutError) as exc:
        raise _PostError(f"{type(exc).__name__}: {exc}") from exc
