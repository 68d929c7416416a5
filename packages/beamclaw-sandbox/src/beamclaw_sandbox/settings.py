"""The ``[sandbox]`` configuration section.

Example::

    [sandbox]
    enabled = true
    scope = "session"            # session | agent | shared
    memory_mb = 256
    network = "none"             # or the name of a Docker network
    env_allow = ["TZ"]           # host variables copied in (never secrets)
    [sandbox.env]
    MPLBACKEND = "Agg"

Invariant: a container's environment is built from an allowlist only (``env_allow``
names and ``env`` values); a name that looks like a credential is refused at load, so
provider keys and gateway secrets cannot be configured into a sandbox by accident.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator

from beamclaw_obs import Section

Scope = Literal["session", "agent", "shared"]
BuildMethod = Literal["auto", "debootstrap", "dockerfile"]

_BRIDGE_RULE = re.compile(r"^(allow|deny):\S+$")
DEFAULT_BRIDGE_RULES = ("deny:exec", "deny:bash", "deny:terminal", "allow:*")
_SECRET_NAME = re.compile(r"(KEY|TOKEN|SECRET|PASSW|CREDENTIAL|AUTH|COOKIE|SESSION)", re.I)
_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _check_env_names(names: list[str]) -> list[str]:
    for name in names:
        if not _ENV_NAME.match(name):
            raise ValueError(f"{name!r} is not an environment variable name")
        if _SECRET_NAME.search(name):
            raise ValueError(f"{name!r} looks like a credential; sandboxes never receive secrets")
    return names


class SandboxSettings(Section):
    """``[sandbox]``: the ``exec`` tool runs model-written code in a hardened Docker
    container (non-root, no capabilities, read-only root, no network by default)."""

    enabled: bool = False
    """Offer the ``exec`` tool (when Docker answers); the host ``bash``/``terminal`` tools
    are then withdrawn unless ``allow_host_shell`` is true."""
    allow_host_shell: bool = False
    """Keep the host ``bash``/``terminal`` tools while the sandbox is on."""
    scope: Scope = "session"
    """Who shares a container: each session (removed when the session ends), each agent,
    or everyone (the last two are removed when the gateway stops)."""
    docker_url: str | None = None
    """Docker engine address (``unix:///var/run/docker.sock``); default ``$DOCKER_HOST``
    or the local socket."""
    image: str = "beamclaw-sandbox:1"
    """Image the containers run; built by ``beamclaw sandbox build`` (or at gateway
    start-up) when missing or built from another recipe."""
    build_on_start: bool = True
    """When enabled and the image is missing, the gateway builds it in the background
    (``/health`` says ``building``; ``exec`` waits for it)."""
    build_method: BuildMethod = "auto"
    """``dockerfile`` builds the packaged Dockerfile over ``base_image`` (which must be
    present locally); ``debootstrap`` builds a Debian root file system offline-friendly
    from a Debian mirror and imports it (needs root and ``debootstrap``); ``auto`` uses
    the Dockerfile when ``base_image`` is present, else debootstrap."""
    base_image: str = "debian:bookworm-slim"
    """Base of the Dockerfile build."""
    debian_suite: str = "bookworm"
    """Debian release debootstrap installs."""
    debian_mirror: str = "http://deb.debian.org/debian"
    """Debian mirror debootstrap downloads from (a local mirror or apt proxy works)."""
    extra_packages: list[str] = Field(default_factory=list[str])
    """Debian packages added to the image besides python3, bash and coreutils."""
    memory_mb: int = Field(default=256, ge=16)
    """Memory limit of a container (swap included: no extra swap)."""
    cpus: float = Field(default=1.0, gt=0)
    """CPU limit of a container (in CPUs)."""
    pids_limit: int = Field(default=128, ge=8)
    """Processes and threads a container may hold at once (fork bombs stop here)."""
    tmp_size_mb: int = Field(default=64, ge=1)
    """Size of the ``/tmp`` tmpfs (mounted ``noexec``)."""
    work_size_mb: int = Field(default=128, ge=1)
    """Size of the writable work directory ``/work`` (a tmpfs, lost with the container)."""
    network: str = "none"
    """Docker network mode: ``none`` (no network at all) or a network name such as
    ``bridge``."""
    env_allow: list[str] = Field(default_factory=list[str])
    """Host environment variables copied into containers (names that look like
    credentials are refused)."""
    env: dict[str, str] = Field(default_factory=dict[str, str])
    """Fixed variables set in containers (same name rule as ``env_allow``)."""
    bridge: bool = True
    """Mount the tool bridge: scripts call the gateway's tools with ``from beamclaw_bridge
    import call_tool`` (policy and approvals apply to every call) and find them in
    ``/tools``."""
    bridge_rules: list[str] = Field(default_factory=lambda: list(DEFAULT_BRIDGE_RULES))
    """Ordered ``allow:<glob>``/``deny:<glob>`` rules over tool names for bridge calls: the
    first match decides, no match denies."""
    pii: bool = True
    """Tokenise PII at the sandbox's boundaries: emails, API keys, card and phone numbers
    (and ``pii_patterns``) in scripts and in tool results sent in become ``PII_<KIND>_<n>``;
    the output shows real values only for those the model already knew."""
    pii_patterns: dict[str, str] = Field(default_factory=dict[str, str])
    """Extra PII patterns: kind → regular expression (e.g. ``employee = "EMP-\\d{6}"``)."""
    default_timeout_seconds: float = Field(default=60.0, gt=0)
    """Timeout of a script when the model asks for none."""
    max_timeout_seconds: float = Field(default=300.0, gt=0)
    """Upper bound on the timeout a model may ask for."""
    max_output_chars: int = Field(default=20_000, ge=100)
    """Characters of stdout and of stderr kept each; the rest is cut with a marker."""
    max_script_bytes: int = Field(default=1_000_000, ge=100)
    """Largest script accepted."""

    @field_validator("network")
    @classmethod
    def _isolated_network(cls, network: str) -> str:
        if network == "host" or network.startswith("container:"):
            raise ValueError(f"network {network!r} would share another network namespace")
        return network

    @field_validator("bridge_rules")
    @classmethod
    def _rules(cls, rules: list[str]) -> list[str]:
        for rule in rules:
            if not _BRIDGE_RULE.match(rule):
                raise ValueError(f"bridge rule {rule!r} is not 'allow:<glob>' or 'deny:<glob>'")
        return rules

    @field_validator("pii_patterns")
    @classmethod
    def _patterns(cls, patterns: dict[str, str]) -> dict[str, str]:
        for kind, regex in patterns.items():
            if not re.fullmatch(r"[A-Za-z0-9]+", kind):
                raise ValueError(f"PII kind {kind!r} may use letters and digits only")
            try:
                re.compile(regex)
            except re.error as e:
                raise ValueError(f"PII pattern {kind!r} is not a regular expression: {e}") from e
        return patterns

    @field_validator("env_allow")
    @classmethod
    def _allowed_names(cls, names: list[str]) -> list[str]:
        return _check_env_names(names)

    @field_validator("env")
    @classmethod
    def _fixed_names(cls, values: dict[str, str]) -> dict[str, str]:
        _check_env_names(list(values))
        return values
