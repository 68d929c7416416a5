"""Building providers from configuration.

``build_provider(name, settings)`` makes the provider for one ``[core.providers.<name>]``
section by its ``kind``; ``build_provider_chain(name, providers)`` also follows the
section's ``fallbacks`` and wraps everything in a :class:`FailoverProvider` (each fallback
provider is built once, even when referenced with several models). Unknown kinds, unknown
fallback names and self-references are :class:`ProviderConfigError`. Extra kinds can be registered
with :func:`register_provider_kind` (e.g. tests or plug-ins).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from beamclaw_core.providers.anthropic import AnthropicProvider
from beamclaw_core.providers.base import Provider, ProviderConfigError
from beamclaw_core.providers.failover import FailoverMember, FailoverProvider
from beamclaw_core.providers.openai import OpenAIProvider
from beamclaw_core.providers.settings import ProviderSettings

if TYPE_CHECKING:
    import httpx

ProviderFactory = Callable[[str, ProviderSettings, "httpx.AsyncBaseTransport | None"], Provider]
"""Builds a provider from its name, settings and (tests) an ``httpx`` transport."""

_KINDS: dict[str, ProviderFactory] = {
    "openai": lambda name, s, t: OpenAIProvider(name, s, transport=t),
    "anthropic": lambda name, s, t: AnthropicProvider(name, s, transport=t),
}


def register_provider_kind(kind: str, factory: ProviderFactory) -> None:
    """Make ``kind`` buildable by :func:`build_provider`."""
    _KINDS[kind] = factory


def provider_kinds() -> tuple[str, ...]:
    return tuple(sorted(_KINDS))


def build_provider(
    name: str, settings: ProviderSettings, *, transport: httpx.AsyncBaseTransport | None = None
) -> Provider:
    """The provider for one configuration section (no failover)."""
    factory = _KINDS.get(settings.kind)
    if factory is None:
        raise ProviderConfigError(
            name, "kind", f"unknown kind {settings.kind!r} (known: {', '.join(provider_kinds())})"
        )
    return factory(name, settings, transport)


def build_provider_chain(
    name: str,
    providers: Mapping[str, ProviderSettings],
    *,
    transport: httpx.AsyncBaseTransport | None = None,
    model: str | None = None,
) -> Provider:
    """``name``'s provider, wrapped in failover when it has fallbacks.

    ``model`` replaces the section's ``model`` for this chain only (an agent's own model);
    fallbacks keep theirs.
    """
    settings = providers.get(name)
    if settings is None:
        known = ", ".join(sorted(providers)) or "none"
        raise ProviderConfigError(
            name, "default_provider", f"no [core.providers.{name}] section (configured: {known})"
        )
    if model is not None:
        settings = settings.model_copy(update={"model": model})
    if not settings.fallbacks:
        return build_provider(name, settings, transport=transport)
    built: dict[str, Provider] = {name: build_provider(name, settings, transport=transport)}
    members = [FailoverMember(built[name])]
    for ref in settings.fallbacks:
        fb = providers.get(ref.provider)
        if fb is None:
            raise ProviderConfigError(name, "fallbacks", f"names unknown provider {ref.provider!r}")
        if ref.provider == name and ref.model is None:
            raise ProviderConfigError(
                name, "fallbacks", "a provider cannot fall back to itself without a different model"
            )
        if ref.provider not in built:
            built[ref.provider] = build_provider(ref.provider, fb, transport=transport)
        members.append(FailoverMember(built[ref.provider], ref.model))
    return FailoverProvider(
        members,
        name=name,
        failure_threshold=settings.failure_threshold,
        cooldown_seconds=settings.cooldown_seconds,
    )
