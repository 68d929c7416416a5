"""Errors raised by agent workspaces (all subclasses of :class:`BeamclawCoreError`)."""

from __future__ import annotations

from beamclaw_core.errors import BeamclawCoreError


class WorkspaceError(BeamclawCoreError):
    """Base of every workspace error. ``agent`` names the agent concerned."""

    def __init__(self, agent: str, message: str) -> None:
        super().__init__(message)
        self.agent = agent


class InvalidAgentNameError(WorkspaceError):
    """The name breaks the agent name rules; ``reason`` says which one."""

    def __init__(self, agent: str, reason: str) -> None:
        super().__init__(agent, f"invalid agent name {agent!r}: {reason}")
        self.reason = reason


class AgentNotFoundError(WorkspaceError):
    """No workspace exists for the agent."""

    def __init__(self, agent: str) -> None:
        super().__init__(agent, f"agent {agent!r} does not exist")


class AgentExistsError(WorkspaceError):
    """``create`` was asked for an agent whose workspace already exists."""

    def __init__(self, agent: str) -> None:
        super().__init__(agent, f"agent {agent!r} already exists")


class ProtectedAgentError(WorkspaceError):
    """The agent may not be deleted (the ``default`` agent)."""

    def __init__(self, agent: str) -> None:
        super().__init__(agent, f"agent {agent!r} is protected and cannot be deleted")


class WorkspaceIOError(WorkspaceError):
    """The file system refused an operation; ``path`` and the OS reason are kept."""

    def __init__(self, agent: str, path: str, reason: str) -> None:
        super().__init__(agent, f"agent {agent!r}: cannot access {path}: {reason}")
        self.path = path
        self.reason = reason
