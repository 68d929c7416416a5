"""Prices per model and the cost of one call.

A :class:`PriceTable` maps model patterns (``fnmatch`` on the name with or without its
``vendor/`` prefix, case-insensitive; exact names first, then the longest matching pattern)
to a :class:`ModelPrice` in USD per million tokens. The built-in table is a starting point
with list prices at the time of writing; configured ``[core.providers.<name>.pricing]``
entries override it. A model with no price has ``cost_usd=None`` (unknown, not free).
"""

from __future__ import annotations

from collections.abc import Mapping
from fnmatch import fnmatchcase

from pydantic import BaseModel, ConfigDict, Field

from beamclaw_core.messages import Usage
from beamclaw_core.providers.context_windows import family_key


class ModelPrice(BaseModel):
    """USD per million tokens. ``cached_input`` defaults to ``input`` when unset."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    cached_input: float | None = Field(default=None, ge=0)

    def cost(self, usage: Usage) -> float:
        """The cost of ``usage`` in USD (cached prompt tokens at the cached rate)."""
        cached = min(usage.cached_tokens, usage.prompt_tokens)
        fresh = usage.prompt_tokens - cached
        cached_rate = self.cached_input if self.cached_input is not None else self.input
        total = fresh * self.input + cached * cached_rate + usage.completion_tokens * self.output
        return round(total / 1_000_000, 10)


BUILTIN_PRICES: dict[str, ModelPrice] = {
    "gpt-4o-mini*": ModelPrice(input=0.15, output=0.60, cached_input=0.075),
    "gpt-4o*": ModelPrice(input=2.50, output=10.00, cached_input=1.25),
    "gpt-4.1-mini*": ModelPrice(input=0.40, output=1.60, cached_input=0.10),
    "gpt-4.1*": ModelPrice(input=2.00, output=8.00, cached_input=0.50),
    "claude-opus-4-5*": ModelPrice(input=5.00, output=25.00, cached_input=0.50),
    "claude-opus-4*": ModelPrice(input=15.00, output=75.00, cached_input=1.50),
    "claude-sonnet-4*": ModelPrice(input=3.00, output=15.00, cached_input=0.30),
    "claude-haiku-4*": ModelPrice(input=1.00, output=5.00, cached_input=0.10),
    "claude-3-5-haiku*": ModelPrice(input=0.80, output=4.00, cached_input=0.08),
}


class PriceTable:
    """Model → price lookup over layered tables; a later table (configuration) is searched
    first, and within a table an exact name beats the longest matching pattern."""

    def __init__(self, *tables: Mapping[str, ModelPrice]) -> None:
        self._tables = [{k.lower(): v for k, v in t.items()} for t in tables]
        self._found: dict[str, ModelPrice | None] = {}
        """Answers so far (the tables never change; every turn asks for its model)."""

    @classmethod
    def default(cls, overrides: Mapping[str, ModelPrice] | None = None) -> PriceTable:
        """The built-in prices with ``overrides`` on top."""
        return cls(BUILTIN_PRICES, overrides or {})

    def price_for(self, model: str) -> ModelPrice | None:
        """The price of ``model``, or None when no table knows it."""
        if model in self._found:
            return self._found[model]
        price = self._search(model)
        if len(self._found) < 4096:
            self._found[model] = price
        return price

    def _search(self, model: str) -> ModelPrice | None:
        full = model.lower()
        key = family_key(model)
        for table in reversed(self._tables):
            for name in (full, key):
                if name in table:
                    return table[name]
            best: tuple[int, ModelPrice] | None = None
            for pattern, price in table.items():
                matches = fnmatchcase(key, pattern) or fnmatchcase(full, pattern)
                if matches and (best is None or len(pattern) > best[0]):
                    best = (len(pattern), price)
            if best is not None:
                return best[1]
        return None

    def cost(self, model: str, usage: Usage) -> float | None:
        """USD for ``usage`` on ``model``, or None when the model has no price."""
        price = self.price_for(model)
        return None if price is None else price.cost(usage)

    def apply(self, model: str, usage: Usage) -> Usage:
        """``usage`` with ``cost_usd`` from the table; a provider-reported cost (OpenRouter)
        is kept when the model has no price."""
        cost = self.cost(model, usage)
        if cost is None:
            return usage
        return usage.model_copy(update={"cost_usd": cost})
