"""Secrets in configuration: ``api_key = { env = "VAR" }``.

A :class:`Secret` is resolved when used, never at load time: a missing variable is a
:class:`MissingSecretError` naming the variable, raised by :meth:`Secret.resolve`, never
a crash at start. Resolved values are registered with the scrubber, so they are redacted
from every log line, event, tool result and LLM payload. ``repr``/``str`` never show them.
A literal string is accepted (handy for local experiments) but is masked the same way.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, SecretStr, model_serializer, model_validator

from beamclaw_obs.errors import MissingSecretError
from beamclaw_obs.scrub import register_secret


class Secret(BaseModel):
    """A secret given as ``{ env = "VAR" }`` (preferred) or as a literal string."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    env: str | None = None
    literal: SecretStr | None = None

    @model_validator(mode="before")
    @classmethod
    def _accept_forms(cls, data: Any) -> Any:
        if isinstance(data, str):
            return {"literal": data}
        return data

    @model_validator(mode="after")
    def _exactly_one(self) -> Secret:
        if (self.env is None) == (self.literal is None):
            raise ValueError('a secret is written { env = "VAR_NAME" } or as a string')
        if self.env is not None and not self.env.strip():
            raise ValueError("env variable name is empty")
        return self

    @classmethod
    def from_env(cls, variable: str) -> Secret:
        return cls(env=variable)

    def is_available(self, environ: Mapping[str, str] | None = None) -> bool:
        """True when :meth:`resolve` would succeed."""
        if self.literal is not None:
            return bool(self.literal.get_secret_value())
        env = os.environ if environ is None else environ
        return bool(env.get(self.env or ""))

    def resolve(self, used_for: str | None = None, environ: Mapping[str, str] | None = None) -> str:
        """The secret's value. Raises :class:`MissingSecretError` when unset or empty."""
        if self.literal is not None:
            value = self.literal.get_secret_value()
            if not value:
                raise MissingSecretError("(literal)", used_for)
        else:
            env = os.environ if environ is None else environ
            value = env.get(self.env or "", "")
            if not value:
                raise MissingSecretError(self.env or "", used_for)
        register_secret(value)
        return value

    def describe(self) -> str:
        """A safe description: ``env:VAR`` or ``literal`` — never the value."""
        return f"env:{self.env}" if self.env is not None else "literal"

    @model_serializer
    def _serialize(self) -> dict[str, str] | str:
        if self.env is not None:
            return {"env": self.env}
        return "********"

    def __repr__(self) -> str:
        return f"Secret({self.describe()})"

    __str__ = __repr__
