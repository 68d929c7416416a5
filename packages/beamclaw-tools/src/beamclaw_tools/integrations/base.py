"""What every integration tool shares: the API client, the settings, error handling.

Invariant: an integration tool never raises for an expected failure; a missing
connection, a refused token, a rate limit or a garbage answer becomes a tool error whose
text says what to do (usually: reconnect). Tools are read-only (``min_autonomy`` is
``read_only``) and their results pass the registry's scrubber like every tool's.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass
from typing import Any, TypeVar, cast

from pydantic import BaseModel, Field

from beamclaw_tools.base import ToolArgs, TypedTool, make_definition
from beamclaw_tools.integrations.client import ApiClient
from beamclaw_tools.integrations.errors import IntegrationError
from beamclaw_tools.integrations.settings import IntegrationsSettings
from beamclaw_tools.output import truncate
from beamclaw_tools.types import SessionRef, ToolOutput

A = TypeVar("A", bound=BaseModel)

SOURCE = "integrations"


@dataclass(frozen=True)
class IntegrationContext:
    """The settings and API client the tools of every service use."""

    settings: IntegrationsSettings
    api: ApiClient

    def page_size(self, asked: int | None) -> int:
        """``asked`` (or the default) capped at ``max_page_size``."""
        wanted = asked if asked is not None else self.settings.page_size
        return max(1, min(wanted, self.settings.max_page_size))

    def body(self, text: str) -> str:
        """A long text cut to ``max_body_chars`` (with the truncation marker)."""
        return truncate(text.strip(), self.settings.max_body_chars)


class PagedArgs(ToolArgs):
    """Arguments shared by listing tools."""

    page_size: int | None = Field(default=None, ge=1, le=100, description="Results per page.")
    cursor: str | None = Field(
        default=None, description="The next_cursor of a previous answer, for the next page."
    )


class IntegrationTool(TypedTool[A]):
    """A read-only tool calling one service's API."""

    def __init__(
        self, context: IntegrationContext, args_model: type[A], name: str, description: str
    ) -> None:
        self.context = context
        settings = context.settings
        timeout = (
            settings.timeout_seconds * (settings.max_retries + 2)
            + settings.max_retry_after_seconds * settings.max_retries
        )
        super().__init__(
            args_model,
            make_definition(
                name, description, args_model, timeout_seconds=timeout + 5, source=SOURCE
            ),
        )

    async def run(self, args: A, session: SessionRef) -> ToolOutput:
        try:
            return await self.fetch(args)
        except IntegrationError as e:
            return ToolOutput.error(str(e))

    @abstractmethod
    async def fetch(self, args: A) -> ToolOutput:
        """Call the API and render a compact answer; IntegrationError becomes a tool error."""


def as_dict(value: Any) -> dict[str, Any]:
    """``value`` when it is a JSON object, else an empty one (tolerant reading)."""
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}


def as_list(value: Any) -> list[dict[str, Any]]:
    """The JSON objects of a JSON array (anything else is skipped)."""
    if not isinstance(value, list):
        return []
    return [cast(dict[str, Any], v) for v in cast(list[Any], value) if isinstance(v, dict)]


def one_line(text: str, limit: int = 200) -> str:
    """Whitespace collapsed, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def next_page(cursor: str | None) -> str:
    """The pagination footer (empty when there is no next page)."""
    return f"\nnext_cursor: {cursor}" if cursor else ""
