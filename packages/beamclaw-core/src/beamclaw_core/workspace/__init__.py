"""Agent workspaces, bootstrap files, the system prompt and the ``/context`` breakdown.

An agent lives in ``$BEAMCLAW_HOME/agents/<name>/`` (seed 003 "Agent Workspaces"):
IDENTITY, SOUL, USER, TOOLS, AGENTS, HEARTBEAT, BOOTSTRAP and MEMORY ``.md`` files,
``memory/YYYY-MM-DD.md`` daily logs and ``skills/``. See docs/workspaces.md.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_core.workspace.agents import (
        REHATCH_KEEPS,
        REHATCH_RESETS,
        AgentDetails,
        AgentSummary,
        BootstrapFileContent,
        RehatchResult,
        agent_exists,
        create_agent,
        delete_agent,
        ensure_agent,
        list_agents,
        rehatch_agent,
        show_agent,
    )
    from beamclaw_core.workspace.context import ContextBreakdown, context_breakdown
    from beamclaw_core.workspace.environment import (
        ENVIRONMENT_HEADER,
        UserTimezone,
        environment_block,
        format_elapsed,
        resolve_timezone,
        timezone_from_user_md,
    )
    from beamclaw_core.workspace.errors import (
        AgentExistsError,
        AgentNotFoundError,
        InvalidAgentNameError,
        ProtectedAgentError,
        WorkspaceError,
        WorkspaceIOError,
    )
    from beamclaw_core.workspace.file_cache import CacheMiss, FileTextCache
    from beamclaw_core.workspace.layout import agent_dir, agents_root, daily_log_path
    from beamclaw_core.workspace.names import (
        DEFAULT_AGENT,
        MAX_AGENT_NAME_LENGTH,
        PROTECTED_AGENTS,
        is_valid_agent_name,
        validate_agent_name,
    )
    from beamclaw_core.workspace.prompt import (
        SystemPrompt,
        build_system_prompt,
        build_system_prompt_async,
    )
    from beamclaw_core.workspace.prompt_cache import PromptCache
    from beamclaw_core.workspace.sections import PromptSection, ReadText, SectionKind, read_text
    from beamclaw_core.workspace.tasks import (
        TASKS_FILENAME,
        TASKS_TEMPLATE,
        Task,
        find_task,
        link_schedule,
        open_tasks,
        parse_tasks,
        read_tasks,
        write_atomic,
        write_tasks,
    )
    from beamclaw_core.workspace.templates import BOOTSTRAP_FILES, BootstrapFile, default_template
    from beamclaw_core.workspace.tokens import (
        estimate_message_tokens,
        estimate_messages_tokens,
        estimate_tokens,
        estimate_tool_tokens,
    )
    from beamclaw_core.workspace.truncate import (
        MAX_FILE_BYTES,
        TRUNCATION_MARKER,
        Truncated,
        truncate_for_prompt,
    )
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_core.workspace.agents": (
                "REHATCH_KEEPS",
                "REHATCH_RESETS",
                "AgentDetails",
                "AgentSummary",
                "BootstrapFileContent",
                "RehatchResult",
                "agent_exists",
                "create_agent",
                "delete_agent",
                "ensure_agent",
                "list_agents",
                "rehatch_agent",
                "show_agent",
            ),
            "beamclaw_core.workspace.context": ("ContextBreakdown", "context_breakdown"),
            "beamclaw_core.workspace.environment": (
                "ENVIRONMENT_HEADER",
                "UserTimezone",
                "environment_block",
                "format_elapsed",
                "resolve_timezone",
                "timezone_from_user_md",
            ),
            "beamclaw_core.workspace.errors": (
                "AgentExistsError",
                "AgentNotFoundError",
                "InvalidAgentNameError",
                "ProtectedAgentError",
                "WorkspaceError",
                "WorkspaceIOError",
            ),
            "beamclaw_core.workspace.file_cache": ("CacheMiss", "FileTextCache"),
            "beamclaw_core.workspace.layout": ("agent_dir", "agents_root", "daily_log_path"),
            "beamclaw_core.workspace.names": (
                "DEFAULT_AGENT",
                "MAX_AGENT_NAME_LENGTH",
                "PROTECTED_AGENTS",
                "is_valid_agent_name",
                "validate_agent_name",
            ),
            "beamclaw_core.workspace.prompt": (
                "SystemPrompt",
                "build_system_prompt",
                "build_system_prompt_async",
            ),
            "beamclaw_core.workspace.prompt_cache": ("PromptCache",),
            "beamclaw_core.workspace.sections": (
                "PromptSection",
                "ReadText",
                "SectionKind",
                "read_text",
            ),
            "beamclaw_core.workspace.tasks": (
                "TASKS_FILENAME",
                "TASKS_TEMPLATE",
                "Task",
                "find_task",
                "link_schedule",
                "open_tasks",
                "parse_tasks",
                "read_tasks",
                "write_atomic",
                "write_tasks",
            ),
            "beamclaw_core.workspace.templates": (
                "BOOTSTRAP_FILES",
                "BootstrapFile",
                "default_template",
            ),
            "beamclaw_core.workspace.tokens": (
                "estimate_message_tokens",
                "estimate_messages_tokens",
                "estimate_tokens",
                "estimate_tool_tokens",
            ),
            "beamclaw_core.workspace.truncate": (
                "MAX_FILE_BYTES",
                "TRUNCATION_MARKER",
                "Truncated",
                "truncate_for_prompt",
            ),
        },
    )

__all__ = [
    "BOOTSTRAP_FILES",
    "DEFAULT_AGENT",
    "ENVIRONMENT_HEADER",
    "MAX_AGENT_NAME_LENGTH",
    "MAX_FILE_BYTES",
    "PROTECTED_AGENTS",
    "REHATCH_KEEPS",
    "REHATCH_RESETS",
    "TASKS_FILENAME",
    "TASKS_TEMPLATE",
    "TRUNCATION_MARKER",
    "AgentDetails",
    "AgentExistsError",
    "AgentNotFoundError",
    "AgentSummary",
    "BootstrapFile",
    "BootstrapFileContent",
    "CacheMiss",
    "ContextBreakdown",
    "FileTextCache",
    "InvalidAgentNameError",
    "PromptCache",
    "PromptSection",
    "ProtectedAgentError",
    "ReadText",
    "RehatchResult",
    "SectionKind",
    "SystemPrompt",
    "Task",
    "Truncated",
    "UserTimezone",
    "WorkspaceError",
    "WorkspaceIOError",
    "agent_dir",
    "agent_exists",
    "agents_root",
    "build_system_prompt",
    "build_system_prompt_async",
    "context_breakdown",
    "create_agent",
    "daily_log_path",
    "default_template",
    "delete_agent",
    "ensure_agent",
    "environment_block",
    "estimate_message_tokens",
    "estimate_messages_tokens",
    "estimate_tokens",
    "estimate_tool_tokens",
    "find_task",
    "format_elapsed",
    "is_valid_agent_name",
    "link_schedule",
    "list_agents",
    "open_tasks",
    "parse_tasks",
    "read_tasks",
    "read_text",
    "rehatch_agent",
    "resolve_timezone",
    "show_agent",
    "timezone_from_user_md",
    "truncate_for_prompt",
    "validate_agent_name",
    "write_atomic",
    "write_tasks",
]
