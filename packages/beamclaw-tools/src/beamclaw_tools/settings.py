"""The ``[tools]`` configuration section.

Every subsection is optional; the defaults are safe (private networks refused, files
confined to the agent workspace, outputs capped). Example::

    [tools]
    max_output_chars = 30000
    [tools.bash]
    timeout_seconds = 60
    strip_env = ["MY_DB_PASSWORD"]
    [tools.files]
    extra_roots = ["~/projects"]
    [tools.http_request]
    allow_private = false
    allowed_hosts = ["10.0.0.0/8", "intranet.local:8443"]
    [tools.http_request.secrets.github]
    env = "GITHUB_TOKEN"
    [tools.web_search]
    api_key = { env = "BRAVE_API_KEY" }
    [tools.browser]
    idle_close_seconds = 600
    [tools.agents.researcher]
    deny = ["bash", "terminal", "write_*"]
    [tools.integrations]          # read-only Gmail, Calendar, Notion, Slack
    enabled = true
"""

from __future__ import annotations

from pathlib import Path

from pydantic import Field

from beamclaw_obs import Secret, Section
from beamclaw_tools.integrations.settings import IntegrationsSettings

DEFAULT_MAX_OUTPUT_CHARS = 30_000


class ShellSettings(Section):
    """``[tools.bash]`` / ``[tools.terminal]``: command execution."""

    cwd: Path | None = None
    """Working directory; default the agent workspace."""
    timeout_seconds: float = Field(default=60.0, gt=0)
    """Default per-command timeout (the model may ask for less, never more)."""
    max_timeout_seconds: float = Field(default=600.0, gt=0)
    """Upper bound on a timeout the model asks for."""
    max_output_chars: int = Field(default=DEFAULT_MAX_OUTPUT_CHARS, ge=100)
    """Output kept (head and tail) before the truncation marker."""
    shell: str = "/bin/bash"
    """The shell ``bash`` runs scripts with (``terminal`` uses no shell)."""
    strip_env: list[str] = Field(default_factory=list[str])
    """Extra variable names removed from the child environment (configured secrets)."""
    keep_env: list[str] = Field(default_factory=list[str])
    """Variable names kept although their name looks secret (e.g. ``SSH_AUTH_SOCK``)."""


class NetworkSettings(Section):
    """Outbound request policy shared by ``http_request`` and ``web_fetch``."""

    allow_private: bool = False
    """Allow loopback/private/link-local/multicast/reserved targets."""
    allowed_hosts: list[str] = Field(default_factory=list[str])
    """Exceptions to the private-address refusal: ``host``, ``host:port``, ``ip``,
    ``ip:port``, ``[v6]:port`` or a CIDR such as ``10.0.0.0/8``."""
    max_response_bytes: int = Field(default=1_000_000, ge=1)
    """Bytes of a response body read; the rest is not downloaded."""
    timeout_seconds: float = Field(default=30.0, gt=0)
    """Timeout of each connect/read/write."""
    max_redirects: int = Field(default=5, ge=0)
    """Redirects followed (each hop re-checked by the SSRF guard)."""
    max_output_chars: int = Field(default=DEFAULT_MAX_OUTPUT_CHARS, ge=100)
    """Cap on the text the model reads."""


class HttpRequestSettings(NetworkSettings):
    """``[tools.http_request]`` (the seed's ``curl``)."""

    secrets: dict[str, Secret] = Field(default_factory=dict[str, Secret])
    """Named secrets the model may reference by name in ``secret_headers``."""


class WebFetchSettings(NetworkSettings):
    """``[tools.web_fetch]``."""

    user_agent: str = "BeamClaw/0.1 (+web_fetch)"
    """User-Agent header sent with page requests."""


class WebSearchSettings(Section):
    """``[tools.web_search]``: Brave Search; the tool is offered only with an API key."""

    api_key: Secret | None = None
    """Brave Search subscription token; without it web_search is not offered."""
    base_url: str = "https://api.search.brave.com/res/v1"
    """Brave Search API base (``/web/search`` is appended)."""
    timeout_seconds: float = Field(default=20.0, gt=0)
    """Timeout of the search request."""
    max_results: int = Field(default=10, ge=1, le=20)
    """Upper bound on results per search."""


class FileToolsSettings(Section):
    """``[tools.files]``: read/write/edit/delete/list/apply_patch/keyword_search."""

    extra_roots: list[Path] = Field(default_factory=list[Path])
    """Directories besides the agent workspace the file tools may touch."""
    max_read_bytes: int = Field(default=2_000_000, ge=1)
    """Bytes read_file reads from one file."""
    max_write_bytes: int = Field(default=5_000_000, ge=1)
    """Largest file write_file/edit_file/apply_patch write."""
    max_output_chars: int = Field(default=DEFAULT_MAX_OUTPUT_CHARS, ge=100)
    """Cap on the text read_file/list_dir return."""
    timeout_seconds: float = Field(default=30.0, gt=0)
    """Timeout of one file tool call."""


class KeywordSearchSettings(Section):
    """``[tools.keyword_search]``."""

    max_matches: int = Field(default=200, ge=1)
    """Matching lines returned at most."""
    max_files: int = Field(default=5_000, ge=1)
    """Files scanned at most."""
    max_file_bytes: int = Field(default=1_000_000, ge=1)
    """Larger files are skipped."""
    timeout_seconds: float = Field(default=30.0, gt=0)
    """Timeout of one search."""


class JqSettings(Section):
    """``[tools.jq]``."""

    max_input_bytes: int = Field(default=5_000_000, ge=1)
    """Largest JSON input (inline or file)."""
    timeout_seconds: float = Field(default=15.0, gt=0)
    """Timeout of one jq run."""


class BrowserSettings(Section):
    """``[tools.browser]``: the Playwright browser tools over a system Chromium.

    Offered only when ``enabled`` and a Chromium executable is found.
    """

    enabled: bool = True
    """Offer the ``browser_*`` tools (when Chromium is found)."""
    executable_path: Path | None = None
    """Chromium to launch; default the first of ``chromium`` / ``chromium-browser`` on PATH."""
    headless: bool = True
    """Run without a window."""
    idle_close_seconds: float = Field(default=600.0, gt=0)
    """An agent's browser context (cookies, tabs) is closed after this long unused."""
    snapshot_max_chars: int = Field(default=5_000, ge=200)
    """Cap on a trimmed accessibility snapshot (``full=true`` skips trimming and the cap)."""
    action_timeout_seconds: float = Field(default=15.0, gt=0)
    """Timeout of one click/type/select/wait (a clear error when it passes)."""
    navigation_timeout_seconds: float = Field(default=30.0, gt=0)
    """Timeout of a navigation (``browser_navigate``, ``browser_back``)."""
    max_pages: int = Field(default=5, ge=1)
    """Open tabs per agent; pop-ups beyond it are closed."""
    allow_private: bool = False
    """Allow navigations and sub-requests to loopback/private/link-local/reserved addresses."""
    allowed_hosts: list[str] = Field(default_factory=list[str])
    """Exceptions to the private-address refusal (the ``web_fetch`` syntax)."""
    download_max_bytes: int = Field(default=20_000_000, ge=1)
    """Largest download saved into the workspace (``downloads/``); larger ones are refused."""
    launch_args: list[str] = Field(
        default_factory=lambda: ["--no-sandbox", "--disable-gpu", "--disable-component-update"]
    )
    """Extra Chromium command-line switches."""


class AgentToolsSettings(Section):
    """``[tools.agents.<agent_id>]``: glob patterns of tool names for one agent."""

    allow: list[str] = Field(default_factory=lambda: ["*"])
    """Tool names this agent may use (glob patterns)."""
    deny: list[str] = Field(default_factory=list[str])
    """Tool names this agent may not use, even when allowed (glob patterns)."""


class ToolsSettings(Section):
    """``[tools]``: built-in tool policy shared by every agent."""

    enabled: list[str] = Field(default_factory=lambda: ["*"])
    """Tool names offered to agents (glob patterns; ``*`` = all)."""
    disabled: list[str] = Field(default_factory=list[str])
    """Tool names never offered, even when ``enabled`` matches (glob patterns)."""
    max_output_chars: int = Field(default=DEFAULT_MAX_OUTPUT_CHARS, ge=100)
    """Cap on any tool result the model reads (registry-wide default)."""
    agents: dict[str, AgentToolsSettings] = Field(default_factory=dict[str, AgentToolsSettings])
    """Per-agent allow/deny lists, narrowing ``enabled``/``disabled``."""
    bash: ShellSettings = Field(default_factory=ShellSettings)
    terminal: ShellSettings = Field(default_factory=ShellSettings)
    http_request: HttpRequestSettings = Field(default_factory=HttpRequestSettings)
    web_fetch: WebFetchSettings = Field(default_factory=WebFetchSettings)
    web_search: WebSearchSettings = Field(default_factory=WebSearchSettings)
    files: FileToolsSettings = Field(default_factory=FileToolsSettings)
    keyword_search: KeywordSearchSettings = Field(default_factory=KeywordSearchSettings)
    jq: JqSettings = Field(default_factory=JqSettings)
    browser: BrowserSettings = Field(default_factory=BrowserSettings)
    integrations: IntegrationsSettings = Field(default_factory=IntegrationsSettings)
