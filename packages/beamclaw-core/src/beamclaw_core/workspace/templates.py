"""The bootstrap files of an agent workspace and their default templates.

The templates live as Markdown files next to this module (``templates/*.md``) so they can
be read and reviewed as documents. ``${agent_name}`` in a template is replaced by the
agent's name when a workspace is created or rehatched; nothing else is substituted.
"""

from __future__ import annotations

import enum
from importlib import resources
from string import Template


class BootstrapFile(enum.StrEnum):
    """A bootstrap file; the value is its file name in the workspace.

    Declaration order is the system-prompt order (seed 003): IDENTITY, SOUL, USER, TOOLS,
    AGENTS, HEARTBEAT, BOOTSTRAP, MEMORY — MEMORY last, closest to the conversation.
    """

    IDENTITY = "IDENTITY.md"
    SOUL = "SOUL.md"
    USER = "USER.md"
    TOOLS = "TOOLS.md"
    AGENTS = "AGENTS.md"
    HEARTBEAT = "HEARTBEAT.md"
    BOOTSTRAP = "BOOTSTRAP.md"
    MEMORY = "MEMORY.md"

    @property
    def label(self) -> str:
        """The file's name without ``.md`` (``SOUL``)."""
        return self.value.removesuffix(".md")


BOOTSTRAP_FILES: tuple[BootstrapFile, ...] = tuple(BootstrapFile)
"""Every bootstrap file, in system-prompt order."""


def default_template(file: BootstrapFile, agent_name: str) -> str:
    """The default content of ``file`` for an agent called ``agent_name``."""
    raw = (
        resources.files("beamclaw_core.workspace")
        .joinpath("templates", file.value)
        .read_text("utf-8")
    )
    return Template(raw).safe_substitute(agent_name=agent_name)
