"""Pasted tokens (Notion, Slack): where to get one, and checking it before it is stored.

A token is never pasted into the conversation: the person pastes it into the gateway's
one-time form (``/integrations/<service>/paste?state=…``) or at the prompt of ``beamclaw
integrations connect``. It is registered with the scrubber the moment it is seen, then checked
against the service's identity endpoint (Notion ``GET /users/me``, Slack ``auth.test``);
only a token the service accepts is stored.
"""

from __future__ import annotations

from typing import Literal

import httpx

from beamclaw_obs import register_secret
from beamclaw_tools.integrations.answers import RetryLater, decode_answer
from beamclaw_tools.integrations.base import as_dict
from beamclaw_tools.integrations.errors import RateLimitedError, ServiceError
from beamclaw_tools.integrations.settings import IntegrationsSettings

PastedService = Literal["notion", "slack"]

HOW_TO_GET: dict[PastedService, str] = {
    "notion": (
        "Create an internal integration at https://www.notion.so/profile/integrations "
        "(read content capability only), copy its secret (it starts with 'ntn_' or "
        "'secret_'), and share the pages or databases I may read with it (page menu → "
        "Connections)."
    ),
    "slack": (
        "Create a Slack app at https://api.slack.com/apps, add the user token scopes "
        "channels:read, groups:read, channels:history, groups:history and search:read, "
        "install it to your workspace and copy the User OAuth Token (it starts with 'xoxp-')."
    ),
}


def paste_path(service: PastedService) -> str:
    """The gateway path of the paste form for ``service``."""
    return f"/integrations/{service}/paste"


def paste_instructions(service: PastedService, link: str) -> str:
    """What the person does to connect ``service``; the token never goes through chat."""
    return (
        f"{HOW_TO_GET[service]}\nThen paste it into this form (valid for a while, usable "
        f"once; the token never goes through our conversation):\n{link}\nor run "
        f"`beamclaw integrations connect {service}` where BeamClaw runs and paste it at the prompt."
    )


async def verify_pasted(
    settings: IntegrationsSettings, service: PastedService, token: str
) -> str | None:
    """Check ``token`` with the service; the account name it belongs to (if told).

    Raises:
        ReconnectRequiredError: the service refused the token.
        IntegrationError: the service could not be asked (rate limit, garbage, network).
    """
    register_secret(token)
    if service == "notion":
        url = settings.notion.base_url.rstrip("/") + "/users/me"
        headers = {"Notion-Version": settings.notion.api_version}
    else:
        url = settings.slack.base_url.rstrip("/") + "/auth.test"
        headers = {}
    headers |= {"Authorization": f"Bearer {token}", "Accept": "application/json"}
    try:
        async with httpx.AsyncClient(timeout=settings.timeout_seconds, trust_env=False) as client:
            response = await client.get(url, headers=headers)
    except httpx.HTTPError as e:
        raise ServiceError(service, 0, f"cannot reach {service}: {type(e).__name__}") from e
    answer = decode_answer(
        service, response.status_code, response.text, response.headers.get("retry-after")
    )
    if isinstance(answer, RetryLater):
        raise RateLimitedError(service, 1, answer.retry_after)
    if service == "notion":
        workspace = as_dict(answer.get("bot")).get("workspace_name")
        return str(workspace or answer.get("name") or "") or None
    team, user = answer.get("team"), answer.get("user")
    return f"{user} @ {team}" if team and user else (str(team or user or "") or None)
