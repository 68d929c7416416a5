"""The agent system the gateway runs: memory, tools, MCP servers, providers and the core.

This is the composition root of everything below the gateway; the CLI's TUI (in-process
mode), ``beamclaw mcp serve`` and tests use it too, so every entry point runs the same
system. Nothing here starts work on construction: :meth:`AgentSystem.start` does.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from beamclaw_core import AgentSettings, CoreSettings, ToolsMemory, agent_profile
from beamclaw_core.api import Core
from beamclaw_core.providers import Provider
from beamclaw_core.workspace import ensure_agent
from beamclaw_gateway.cluster_settings import cluster_link
from beamclaw_gateway.config import BeamclawConfig
from beamclaw_mcp import MCPManager
from beamclaw_memory import Database, MemoryService, create_memory_service
from beamclaw_obs import ComponentHealth, HealthRegistry, HealthState, beamclaw_home
from beamclaw_tools import (
    SessionRef,
    ToolPolicy,
    ToolRegistry,
    browser_tools,
    open_browser_pool,
)

if TYPE_CHECKING:
    from beamclaw_core.sessions import SessionEnd
    from beamclaw_sandbox import Sandbox
    from beamclaw_tools.integrations import Integrations

HOST_SHELL_TOOLS = ("bash", "terminal")
"""Withdrawn while ``[sandbox] enabled`` (unless ``allow_host_shell``): code runs in the
sandbox's ``exec``, not on the host."""

PROVIDER_STACK = "beamclaw_core.providers.registry"
"""The module that brings the provider wires and their HTTP clients."""


def warm_provider_stack() -> None:
    """Import the provider stack (run in a worker thread once the gateway is ready, so the
    first turn does not pay the import)."""
    import importlib

    importlib.import_module(PROVIDER_STACK)


@dataclass
class ProviderCache:
    """One long-lived provider chain per (provider, model), shared by the agents that
    resolve to it (``[agents.<id>]``, else ``[core]``); :meth:`close` closes them all.

    Chains are built on an agent's first turn, and the provider stack (its HTTP clients,
    aiohttp and httpx) is imported then, not at start-up: the gateway warms it in the
    background once it is ready (:func:`warm_provider_stack`)."""

    core: CoreSettings
    agents: Mapping[str, AgentSettings] = field(default_factory=dict[str, AgentSettings])
    built: dict[tuple[str, str | None], Provider] = field(
        default_factory=dict[tuple[str, str | None], Provider]
    )

    def __call__(self, agent_id: str) -> Provider:
        profile = agent_profile(self.core, self.agents, agent_id)
        key = (profile.provider, profile.model_override)
        provider = self.built.get(key)
        if provider is None:
            from beamclaw_core.providers.registry import build_provider_chain

            provider = build_provider_chain(
                profile.provider, self.core.providers, model=profile.model_override
            )
            self.built[key] = provider
        return provider

    async def close(self) -> None:
        for provider in self.built.values():
            await provider.close()
        self.built.clear()


class AgentSystem:
    """Memory + tools + MCP + providers + :class:`Core`, wired from one configuration."""

    def __init__(
        self,
        config: BeamclawConfig,
        database: Database,
        *,
        provider_factory: Callable[[str], Provider] | None = None,
    ) -> None:
        self.config = config
        self.database = database
        self.memory: MemoryService = create_memory_service(config.memory, database)
        # offered only when enabled and a Chromium is found; nothing starts before a call
        self.browser = open_browser_pool(config.tools.browser)
        self.tools = ToolRegistry.with_builtins(
            config.tools,
            memory=ToolsMemory(self.memory),
            extra=browser_tools(self.browser) if self.browser is not None else (),
        )
        self.mcp = MCPManager(config.mcp, sink=self.tools)
        self.integrations: Integrations | None = None
        if config.tools.integrations.enabled:
            # imported only when enabled: httpx and cryptography are not a start-up cost
            from beamclaw_tools.integrations import Integrations

            self.integrations = Integrations(config.tools.integrations, home=beamclaw_home())
            self.tools.register_many(self.integrations.tools())
        self._providers = ProviderCache(config.core, config.agents)
        self.link = cluster_link(config.cluster, database)
        self.core = Core.create(
            config.core,
            database,
            provider=provider_factory or self._providers,
            tools=self.tools,
            tool_policy=self.tool_policy,
            memory=self.memory,
            memory_settings=config.memory,
            agents=config.agents,
            link=self.link,
        )
        self.sandbox: Sandbox | None = None
        if config.sandbox.enabled:
            # imported only when enabled: the sandbox's modules are not a start-up cost
            from beamclaw_sandbox import Sandbox, ToolBridge

            bridge = None
            if config.sandbox.bridge:
                bridge = ToolBridge(
                    self.tools,
                    rules=config.sandbox.bridge_rules,
                    policy_for=self.tool_policy,
                    grants=self._granted_tools,
                )
            self.sandbox = Sandbox(config.sandbox, home=beamclaw_home(), bridge=bridge)
        self._started = False

    async def _granted_tools(self, session: SessionRef) -> set[str]:
        """The sandbox bridge's approval port: the person's standing ``/always`` grants."""
        grants = await self.core.always_grants(agent_id=session.agent_id, user_id=session.user_id)
        return {grant.tool for grant in grants}

    def tool_policy(self, agent_id: str) -> ToolPolicy:
        """``[tools]`` allow/deny for the agent, minus MCP servers it is not granted."""
        policy = ToolPolicy.for_agent(self.config.tools, agent_id)
        denied = list(self.mcp.denied_tool_names(agent_id))
        if self.sandbox is not None and not self.config.sandbox.allow_host_shell:
            denied.extend(HOST_SHELL_TOOLS)
        return policy.narrowed(deny=denied) if denied else policy

    async def start(self) -> None:
        """Start MCP servers (in the background) and the core (recovering sessions)."""
        if self._started:
            return
        ensure_agent(self.config.core.default_agent)
        self.mcp.start()
        if self.sandbox is not None:
            await self._start_sandbox(self.sandbox)
        await self.core.start(migrate=False)
        self._started = True

    async def stop(self) -> None:
        """Stop the core first (turns persist; transcript indexing drains), then MCP
        servers, provider clients and the memory service's embeddings client."""
        if not self._started:
            return
        self._started = False
        await self.core.stop()
        if self.sandbox is not None:
            await self.sandbox.stop()
        await self.mcp.stop()
        if self.browser is not None:
            await self.browser.close()
        await self._providers.close()
        await self.memory.aclose()

    async def _start_sandbox(self, sandbox: Sandbox) -> None:
        """Connect to Docker (reaping orphans, building a missing image in the background);
        ``exec`` is offered only when the engine answered, and a session's end removes
        its container."""
        from beamclaw_sandbox import ExecTool

        await sandbox.start()
        if not sandbox.offered:
            return
        self.tools.register(ExecTool(sandbox))

        async def release(end: SessionEnd) -> None:
            await sandbox.end_session(end.session_id)

        self.core.on_session_end(release)

    def register_health(self, health: HealthRegistry) -> None:
        health.register("sessions", self._sessions_health, critical=True)
        health.register("mcp", self.mcp.health)
        if self.sandbox is not None:
            health.register("sandbox", self.sandbox.health)

    def _sessions_health(self) -> ComponentHealth:
        if not self._started:
            return ComponentHealth(HealthState.STARTING)
        return ComponentHealth(HealthState.UP)
