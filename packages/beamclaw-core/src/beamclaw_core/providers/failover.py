"""Failover across providers: a primary plus fallbacks, with cooldown.

:class:`FailoverProvider` tries its members in order. A member that fails with a
failover-worthy kind (default: AUTH, RATE_LIMIT, NETWORK, UNKNOWN — not INVALID_REQUEST,
which the next provider would reject too, nor CONTEXT_OVERFLOW, which the loop answers by
compacting) is skipped for the next one. After ``failure_threshold`` consecutive failures a
member cools down for ``cooldown_seconds`` (longer if the server's ``Retry-After`` says so)
and is skipped while cooling, unless every member is cooling (then all are tried in order:
failover never refuses to try). A success resets the member's count.

Which model answered is recorded on the completion (``Completion.model`` /
``Completion.provider``, ``FinishChunk.model``) and in :attr:`FailoverProvider.last_answered_by`;
each switch emits ``llm_failover``. A stream fails over only before its first chunk was
yielded; after that the error propagates (text already shown cannot be taken back).
When every member fails, the last error is raised with a message listing each attempt.
The clock is injectable (``clock=``) so cooldown is tested without sleeping.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable, Sequence
from dataclasses import dataclass

from beamclaw_core.messages import Message
from beamclaw_core.providers.base import (
    Capabilities,
    Completion,
    CompletionOptions,
    ErrorKind,
    FinishChunk,
    Provider,
    ProviderError,
    StreamChunk,
)
from beamclaw_obs import EventType, emit

DEFAULT_FAILOVER_KINDS = frozenset(
    {ErrorKind.AUTH, ErrorKind.RATE_LIMIT, ErrorKind.NETWORK, ErrorKind.UNKNOWN}
)


@dataclass(frozen=True)
class FailoverMember:
    """One entry of the chain: a provider and, optionally, the model to ask it for."""

    provider: Provider
    model: str | None = None

    @property
    def label(self) -> str:
        return f"{self.provider.name}:{self.model or self.provider.model}"


@dataclass
class MemberHealth:
    """Consecutive failures and cooldown deadline (clock time) of one member."""

    failures: int = 0
    cooling_until: float = 0.0


class FailoverProvider:
    """A :class:`Provider` over a primary and its fallbacks. See the module docstring."""

    def __init__(
        self,
        members: Sequence[FailoverMember | Provider],
        *,
        name: str | None = None,
        failure_threshold: int = 2,
        cooldown_seconds: float = 60.0,
        failover_on: frozenset[ErrorKind] = DEFAULT_FAILOVER_KINDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not members:
            raise ValueError("a failover chain needs at least one provider")
        self._members = [m if isinstance(m, FailoverMember) else FailoverMember(m) for m in members]
        self._name = name or self._members[0].provider.name
        self._threshold = failure_threshold
        self._cooldown = cooldown_seconds
        self._failover_on = failover_on
        self._clock = clock
        self._health = [MemberHealth() for _ in self._members]
        self.last_answered_by: str | None = None

    @property
    def name(self) -> str:
        return self._name

    @property
    def model(self) -> str:
        first = self._members[0]
        return first.model or first.provider.model

    @property
    def members(self) -> tuple[FailoverMember, ...]:
        return tuple(self._members)

    def health(self) -> tuple[MemberHealth, ...]:
        """Failure counts and cooldowns, in member order."""
        return tuple(MemberHealth(h.failures, h.cooling_until) for h in self._health)

    def capabilities(self) -> Capabilities:
        """The primary's capabilities, with the smallest context window of the chain (a
        fallback must be able to take the same history)."""
        primary = self._members[0].provider.capabilities()
        window = min(m.provider.capabilities().context_window for m in self._members)
        return primary.model_copy(update={"context_window": window})

    async def close(self) -> None:
        seen: set[int] = set()
        for m in self._members:
            if id(m.provider) not in seen:
                seen.add(id(m.provider))
                await m.provider.close()

    def _order(self) -> list[int]:
        now = self._clock()
        ready = [i for i, h in enumerate(self._health) if h.cooling_until <= now]
        return ready or list(range(len(self._members)))

    def _options(self, member: FailoverMember, options: CompletionOptions) -> CompletionOptions:
        if member.model and not options.model:
            return options.model_copy(update={"model": member.model})
        return options

    def _failed(self, index: int, error: ProviderError) -> None:
        health = self._health[index]
        health.failures += 1
        if health.failures >= self._threshold:
            wait = max(self._cooldown, error.retry_after or 0.0)
            health.cooling_until = self._clock() + wait

    def _succeeded(self, index: int, member: FailoverMember, model: str | None) -> None:
        self._health[index] = MemberHealth()
        self.last_answered_by = f"{member.provider.name}:{model or member.label.split(':', 1)[1]}"

    def _switch(
        self,
        member: FailoverMember,
        error: ProviderError,
        nxt: FailoverMember | None,
        options: CompletionOptions,
    ) -> None:
        emit(
            EventType.LLM_FAILOVER,
            provider=self._name,
            failed=member.label,
            error_kind=error.kind.value,
            next=nxt.label if nxt else None,
            session_id=options.session_id,
        )

    def _exhausted(self, errors: list[tuple[FailoverMember, ProviderError]]) -> ProviderError:
        member, last = errors[-1]
        tried = "; ".join(f"{m.label} → {e.kind.value}: {e.message}" for m, e in errors)
        return ProviderError(
            last.kind,
            f"every provider failed: {tried}",
            provider=self._name,
            status=last.status,
            retry_after=last.retry_after,
            model=member.model or member.provider.model,
        )

    async def complete(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> Completion:
        opts = options or CompletionOptions()
        errors: list[tuple[FailoverMember, ProviderError]] = []
        order = self._order()
        for pos, index in enumerate(order):
            member = self._members[index]
            try:
                done = await member.provider.complete(messages, self._options(member, opts))
            except ProviderError as e:
                self._failed(index, e)
                errors.append((member, e))
                if e.kind not in self._failover_on:
                    raise
                nxt = self._members[order[pos + 1]] if pos + 1 < len(order) else None
                self._switch(member, e, nxt, opts)
                continue
            self._succeeded(index, member, done.model)
            return done.model_copy(update={"provider": member.provider.name})
        raise self._exhausted(errors)

    async def stream(
        self, messages: list[Message], options: CompletionOptions | None = None
    ) -> AsyncIterator[StreamChunk]:
        opts = options or CompletionOptions()
        errors: list[tuple[FailoverMember, ProviderError]] = []
        order = self._order()
        for pos, index in enumerate(order):
            member = self._members[index]
            yielded = False
            try:
                async for chunk in member.provider.stream(messages, self._options(member, opts)):
                    if isinstance(chunk, FinishChunk):
                        self._succeeded(index, member, chunk.model)
                    yielded = True
                    yield chunk
                return
            except ProviderError as e:
                self._failed(index, e)
                errors.append((member, e))
                if yielded or e.kind not in self._failover_on:
                    raise
                nxt = self._members[order[pos + 1]] if pos + 1 < len(order) else None
                self._switch(member, e, nxt, opts)
        raise self._exhausted(errors)
