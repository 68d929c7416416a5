"""The onboarding test call: one real message through the configured provider.

Failures become one line saying what went wrong and what to do, never a traceback and
never the key (provider errors are scrubbed at their source).
"""

from __future__ import annotations

from beamclaw_cli.errors import BeamclawCliError
from beamclaw_core import (
    CompletionOptions,
    ErrorKind,
    Message,
    ProviderError,
    ProviderSettings,
    build_provider,
)

PROBE_PROMPT = "Say hello in one short sentence: this is a connection test."


class ProbeFailedError(BeamclawCliError):
    """The test call did not get an answer; the message says why and what to do."""


def explain(error: ProviderError, settings: ProviderSettings) -> str:
    """One actionable line for a failed test call."""
    if error.kind is ErrorKind.AUTH and error.status is not None:
        return (
            f"the provider refused the key (HTTP {error.status}): check it and run "
            f"`beamclaw onboard` again ({error.message})"
        )
    if error.kind is ErrorKind.AUTH:
        return error.message
    if error.kind is ErrorKind.NETWORK and error.status is None:
        return (
            f"cannot reach {settings.base_url} ({error.message}): is the server running and "
            "the URL right? (`beamclaw onboard --base-url ...`)"
        )
    if error.kind is ErrorKind.INVALID_REQUEST:
        return (
            f"the provider refused the request ({error.message}): is the model "
            f"{settings.model!r} right? (`beamclaw onboard --model ...`)"
        )
    return f"the test call failed: {error.message}"


async def probe(name: str, settings: ProviderSettings) -> str:
    """The model's answer to :data:`PROBE_PROMPT`. Raises :class:`ProbeFailedError`."""
    provider = build_provider(name, settings)
    try:
        completion = await provider.complete(
            [Message.user(PROBE_PROMPT)], CompletionOptions(max_tokens=64)
        )
    except ProviderError as exc:
        raise ProbeFailedError(explain(exc, settings)) from exc
    finally:
        await provider.close()
    return completion.message.text.strip() or "(an empty answer)"
