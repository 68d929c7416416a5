"""beamclaw-core: providers, the agentic loop, sessions, workspaces."""

from beamclaw_core.errors import BeamclawCoreError
from beamclaw_core.messages import Message, Role, Usage
from beamclaw_core.providers import ProviderSettings
from beamclaw_core.settings import AgenticLoopSettings, CoreSettings, describe_llm_provider

__version__ = "0.1.0"

__all__ = [
    "AgenticLoopSettings",
    "BeamclawCoreError",
    "CoreSettings",
    "Message",
    "ProviderSettings",
    "Role",
    "Usage",
    "__version__",
    "describe_llm_provider",
]
