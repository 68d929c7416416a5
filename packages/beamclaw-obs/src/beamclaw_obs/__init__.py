"""beamclaw-obs: events, logging, metrics, configuration loading and supervision.

The lowest layer of BeamClaw: it imports no sibling package.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from beamclaw_obs.lazy import lazy_exports

if TYPE_CHECKING:
    from beamclaw_obs.cancelled import cancel_and_wait, forget_cancellation
    from beamclaw_obs.config import (
        BeamclawSettingsBase,
        LoadedConfig,
        load_settings,
        unknown_keys,
    )
    from beamclaw_obs.config_file import find_config_file, read_toml
    from beamclaw_obs.emitter import BackendStats, Emitter, ObsBackend, emit, get_emitter
    from beamclaw_obs.errors import (
        BeamclawObsError,
        ConfigError,
        HomeNotWritableError,
        MissingSecretError,
        SupervisorError,
    )
    from beamclaw_obs.events import Event, EventType
    from beamclaw_obs.health import ComponentHealth, HealthRegistry, HealthState
    from beamclaw_obs.home import beamclaw_home, ensure_home
    from beamclaw_obs.log_backend import LogBackend, configure_logging
    from beamclaw_obs.metrics_backend import MetricsBackend
    from beamclaw_obs.scrub import REDACTED, forget_secrets, register_secret, scrub, scrub_value
    from beamclaw_obs.secrets import Secret
    from beamclaw_obs.section import Section, read_section
    from beamclaw_obs.settings import ObsSettings
    from beamclaw_obs.stream_scrub import StreamScrubber
    from beamclaw_obs.supervisor import (
        Backoff,
        ChildSpec,
        ChildState,
        ChildStatus,
        Restart,
        Supervisor,
    )
else:
    __getattr__, __dir__ = lazy_exports(
        globals(),
        {
            "beamclaw_obs.config": (
                "BeamclawSettingsBase",
                "LoadedConfig",
                "load_settings",
                "unknown_keys",
            ),
            "beamclaw_obs.cancelled": ("cancel_and_wait", "forget_cancellation"),
            "beamclaw_obs.config_file": ("find_config_file", "read_toml"),
            "beamclaw_obs.section": ("Section", "read_section"),
            "beamclaw_obs.emitter": (
                "BackendStats",
                "Emitter",
                "ObsBackend",
                "emit",
                "get_emitter",
            ),
            "beamclaw_obs.errors": (
                "BeamclawObsError",
                "ConfigError",
                "HomeNotWritableError",
                "MissingSecretError",
                "SupervisorError",
            ),
            "beamclaw_obs.events": ("Event", "EventType"),
            "beamclaw_obs.health": ("ComponentHealth", "HealthRegistry", "HealthState"),
            "beamclaw_obs.home": ("beamclaw_home", "ensure_home"),
            "beamclaw_obs.log_backend": ("LogBackend", "configure_logging"),
            "beamclaw_obs.metrics_backend": ("MetricsBackend",),
            "beamclaw_obs.scrub": (
                "REDACTED",
                "forget_secrets",
                "register_secret",
                "scrub",
                "scrub_value",
            ),
            "beamclaw_obs.secrets": ("Secret",),
            "beamclaw_obs.settings": ("ObsSettings",),
            "beamclaw_obs.stream_scrub": ("StreamScrubber",),
            "beamclaw_obs.supervisor": (
                "Backoff",
                "ChildSpec",
                "ChildState",
                "ChildStatus",
                "Restart",
                "Supervisor",
            ),
        },
    )

__version__ = "0.1.0"
__all__ = [
    "REDACTED",
    "BackendStats",
    "Backoff",
    "BeamclawObsError",
    "BeamclawSettingsBase",
    "ChildSpec",
    "ChildState",
    "ChildStatus",
    "ComponentHealth",
    "ConfigError",
    "Emitter",
    "Event",
    "EventType",
    "HealthRegistry",
    "HealthState",
    "HomeNotWritableError",
    "LoadedConfig",
    "LogBackend",
    "MetricsBackend",
    "MissingSecretError",
    "ObsBackend",
    "ObsSettings",
    "Restart",
    "Secret",
    "Section",
    "StreamScrubber",
    "Supervisor",
    "SupervisorError",
    "__version__",
    "beamclaw_home",
    "cancel_and_wait",
    "configure_logging",
    "emit",
    "ensure_home",
    "find_config_file",
    "forget_cancellation",
    "forget_secrets",
    "get_emitter",
    "load_settings",
    "read_section",
    "read_toml",
    "register_secret",
    "scrub",
    "scrub_value",
    "unknown_keys",
]
