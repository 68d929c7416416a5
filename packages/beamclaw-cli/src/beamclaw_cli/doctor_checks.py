"""The checks behind ``beamclaw doctor`` (imported only when doctor runs).

Is this installation able to run, and is it exposed safely?

Prints one ``[ok]``/``[warn]``/``[fail]`` line per check; exits 1 when any check fails.
Network checks (provider endpoints) use a short timeout and can be skipped with
``--offline``.
"""

from __future__ import annotations

import asyncio
import platform
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import httpx

from beamclaw_cli.commands.version import package_versions
from beamclaw_core import agent_profile, describe_llm_provider, unknown_agent_providers
from beamclaw_gateway import BeamclawConfig, effective_port, is_loopback, load_config
from beamclaw_memory import Database, expected_heads, resolve_database_url
from beamclaw_obs import ConfigError, beamclaw_home
from beamclaw_tools.browser import CHROMIUM_NAMES, find_chromium

Level = Literal["ok", "warn", "fail"]


@dataclass(frozen=True)
class Check:
    level: Level
    name: str
    detail: str


def check_python() -> list[Check]:
    ok = sys.version_info >= (3, 11)
    versions = ", ".join(
        f"{k.removeprefix('beamclaw-')} {v}" for k, v in package_versions().items()
    )
    return [
        Check("ok" if ok else "fail", "python", f"Python {platform.python_version()}"),
        Check("ok", "packages", versions),
    ]


def check_providers(cfg: BeamclawConfig, offline: bool, timeout: float) -> list[Check]:
    out: list[Check] = []
    usable, line = describe_llm_provider(cfg.core)
    out.append(
        Check("ok" if usable else "fail", "llm provider", line.removeprefix("LLM provider: "))
    )
    for name, provider in sorted(cfg.core.providers.items()):
        is_default = name == cfg.core.default_provider
        if provider.api_key is not None and not provider.api_key.is_available():
            if not is_default:
                out.append(
                    Check(
                        "warn",
                        f"provider {name}",
                        f"key {provider.api_key.describe()} not set (not the default)",
                    )
                )
            continue
        if offline:
            continue
        try:
            r = httpx.get(provider.base_url.rstrip("/") + "/models", timeout=timeout)
            out.append(
                Check(
                    "ok",
                    f"provider {name}",
                    f"{provider.base_url} reachable (HTTP {r.status_code})",
                )
            )
        except httpx.HTTPError as exc:
            level: Level = "fail" if is_default else "warn"
            out.append(
                Check(
                    level,
                    f"provider {name}",
                    f"{provider.base_url} unreachable: {type(exc).__name__}",
                )
            )
    return out


def check_agents(cfg: BeamclawConfig) -> list[Check]:
    """One line per ``[agents.<id>]``: its provider, model and autonomy; ``fail`` when the
    provider is not configured or its key is missing, ``warn`` at ``full`` autonomy."""
    out = [Check("fail", "agents", line) for line in unknown_agent_providers(cfg.core, cfg.agents)]
    for agent_id in sorted(cfg.agents):
        profile = agent_profile(cfg.core, cfg.agents, agent_id)
        provider = cfg.core.providers.get(profile.provider)
        if provider is None:
            continue
        detail = (
            f"provider {profile.provider}, model {profile.model(cfg.core)}, "
            f"autonomy {profile.autonomy.value}"
        )
        level: Level = "warn" if profile.autonomy.value == "full" else "ok"
        if provider.api_key is not None and not provider.api_key.is_available():
            level = "fail"
            detail += f": key {provider.api_key.describe()} not set"
        out.append(Check(level, f"agent {agent_id}", detail))
    return out


async def _database(cfg: BeamclawConfig, home: Path) -> list[Check]:
    db = Database(resolve_database_url(cfg.memory.database_url, home))
    try:
        await db.check()
        current = await db.current_heads()
        expected = expected_heads()
        if current == expected:
            return [Check("ok", "database", f"{db.display_url} reachable, migrated")]
        missing = ", ".join(sorted(expected - current))
        return [
            Check(
                "warn",
                "database",
                f"{db.display_url} reachable; migrations {missing} will be applied at start",
            )
        ]
    except Exception as exc:
        return [Check("fail", "database", str(exc))]
    finally:
        await db.dispose()


def check_home(home: Path) -> list[Check]:
    try:
        home.mkdir(parents=True, exist_ok=True)
        probe = home / ".doctor-write-test"
        probe.write_text("ok")
        probe.unlink()
        return [Check("ok", "home", f"{home} writable")]
    except OSError as exc:
        return [Check("fail", "home", f"{home} not writable: {exc.strerror}")]


def check_runtimes(cfg: BeamclawConfig) -> list[Check]:
    out: list[Check] = []
    npm_servers = [s.name for s in cfg.mcp.servers if s.command in ("npx", "node", "npm")]
    node, npx = shutil.which("node"), shutil.which("npx")
    if node and npx:
        out.append(Check("ok", "node", f"node and npx at {Path(node).parent}"))
    else:
        level: Level = "fail" if npm_servers else "warn"
        needed = f" (needed by MCP servers {', '.join(npm_servers)})" if npm_servers else ""
        out.append(Check(level, "node", f"node/npx not found{needed}"))
    return out


def check_browser(cfg: BeamclawConfig) -> list[Check]:
    """``[tools.browser]``: which Chromium the ``browser_*`` tools launch, or how to get one."""
    settings = cfg.tools.browser
    if not settings.enabled:
        return [Check("ok", "browser", "disabled ([tools.browser] enabled = false)")]
    found = find_chromium(settings)
    if found is not None:
        return [Check("ok", "browser", f"Chromium at {found}; browser_* tools offered")]
    where = (
        f"{settings.executable_path} does not exist"
        if settings.executable_path is not None
        else f"none of {', '.join(CHROMIUM_NAMES)} is on PATH"
    )
    return [
        Check(
            "warn",
            "browser",
            f"Chromium not found ({where}): browser_* tools are not offered; install it "
            "(Debian/Ubuntu: `sudo apt-get install chromium`) or set [tools.browser] "
            "executable_path",
        )
    ]


def check_exposure(cfg: BeamclawConfig) -> list[Check]:
    out: list[Check] = []
    http = cfg.gateway.http
    bind = f"{http.host}:{effective_port(cfg)}"
    token_ok = http.token is not None and http.token.is_available()
    if is_loopback(http.host):
        out.append(Check("ok", "bind", f"{bind} (loopback only)"))
    elif token_ok:
        out.append(Check("warn", "bind", f"{bind} is reachable from the network; token required"))
    else:
        out.append(
            Check(
                "fail", "bind", f"{bind} without a gateway token: the gateway will refuse to start"
            )
        )
    if token_ok:
        out.append(Check("ok", "auth", "bearer token required on /v1, /api, /ws and A2A"))
    else:
        out.append(
            Check("warn", "auth", "no gateway token: anyone on this machine can use the API")
        )
    if not http.metrics_public:
        out.append(Check("ok", "metrics", "/metrics requires the token"))
    autonomy = cfg.core.autonomy_level.value
    level: Level = "warn" if autonomy == "full" else "ok"
    out.append(
        Check(
            level,
            "approvals",
            f"autonomy_level = {autonomy}"
            + (" (tools run without asking)" if autonomy == "full" else ""),
        )
    )
    out.append(check_rate_limits(cfg))
    return out


def check_rate_limits(cfg: BeamclawConfig) -> Check:
    """The effective ``[gateway.rate_limit]`` settings, every key as the model holds it."""
    limits = cfg.gateway.rate_limit
    if not limits.enabled:
        return Check("warn", "rate limits", "off ([gateway.rate_limit] enabled = false)")
    shown = ", ".join(
        f"{key} {', '.join(map(str, value)) if isinstance(value, list) else value}"
        for key, value in limits.model_dump().items()
        if key != "enabled"
    )
    return Check("ok", "rate limits", shown)


def check_telegram(cfg: BeamclawConfig, offline: bool, timeout: float) -> list[Check]:
    """With the Telegram channel on: its token is set and Telegram accepts it (``getMe``)."""
    tg = cfg.gateway.channels.telegram
    if not tg.enabled:
        return []
    if tg.token is None or not tg.token.is_available():
        described = tg.token.describe() if tg.token is not None else "token"
        return [Check("fail", "telegram", f"bot token {described} is not set")]
    if offline:
        return [Check("ok", "telegram", f"token set ({tg.mode}, dm_policy {tg.dm_policy})")]
    token = tg.token.resolve("the Telegram bot token")
    url = f"{tg.api_base_url.rstrip('/')}/bot{token}/getMe"
    try:
        r = httpx.get(url, timeout=timeout)
    except httpx.HTTPError as exc:
        return [Check("warn", "telegram", f"{tg.api_base_url} unreachable: {type(exc).__name__}")]
    if r.status_code == 401:
        return [Check("fail", "telegram", "Telegram rejected the bot token (401 Unauthorized)")]
    try:
        username = r.json()["result"]["username"]
    except (ValueError, KeyError, TypeError):
        return [Check("warn", "telegram", f"getMe answered HTTP {r.status_code}")]
    return [Check("ok", "telegram", f"bot @{username} ({tg.mode}, dm_policy {tg.dm_policy})")]


def check_sandbox(cfg: BeamclawConfig) -> list[Check]:
    """``[sandbox]``: the engine, the image and the limits containers get (the docker SDK
    is imported only when the sandbox is enabled)."""
    settings = cfg.sandbox
    if not settings.enabled:
        return [Check("ok", "sandbox", "disabled (exec not offered; [sandbox] enabled = false)")]
    from beamclaw_cli.commands.sandbox import limits_line
    from beamclaw_sandbox import DockerUnavailableError, SandboxAdmin

    try:
        admin = SandboxAdmin.open(settings, beamclaw_home())
    except DockerUnavailableError as e:
        return [Check("fail", "sandbox", f"{e}: exec is not offered")]
    with admin:
        recipe = admin.recipe
        state = admin.image_state()
    out = [Check("ok", "sandbox engine", "Docker answers")]
    if state == "present":
        out.append(Check("ok", "sandbox image", f"{recipe.image} (recipe {recipe.digest})"))
    else:
        when = "at start-up" if settings.build_on_start else "never by itself"
        out.append(
            Check(
                "warn",
                "sandbox image",
                f"{recipe.image} is {state}: the gateway builds it {when}; "
                "or run `beamclaw sandbox build`",
            )
        )
    out.append(Check("ok", "sandbox limits", limits_line(settings)))
    return out


def run_checks(config: Path | None, offline: bool, timeout: float) -> list[Check]:
    checks = check_python()
    try:
        loaded = load_config(config)
    except ConfigError as exc:
        return [*checks, Check("fail", "config", str(exc))]
    checks.append(Check("ok", "config", f"valid ({loaded.source})"))
    checks += [Check("warn", "config", w) for w in loaded.warnings]
    cfg = loaded.settings
    home = beamclaw_home()
    checks += check_home(home)
    checks += check_providers(cfg, offline, timeout)
    checks += check_telegram(cfg, offline, timeout)
    checks += check_agents(cfg)
    checks += asyncio.run(_database(cfg, home))
    checks += check_runtimes(cfg)
    checks += check_sandbox(cfg)
    checks += check_browser(cfg)
    checks += check_exposure(cfg)
    return checks
