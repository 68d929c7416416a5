"""Running the gateway in the foreground: bind policy, port check, uvicorn."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import socket
from collections.abc import Callable, Coroutine
from types import FrameType
from typing import Any, Literal, TypeVar

import uvicorn
from loguru import logger

from beamclaw_core import describe_llm_provider
from beamclaw_gateway.app import GatewayApp, create_app
from beamclaw_gateway.config import BeamclawConfig, effective_port
from beamclaw_gateway.errors import GatewayConfigError, PortInUseError
from beamclaw_gateway.ratelimit import is_loopback_address
from beamclaw_gateway.runtime import GatewayRuntime


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``."""
    return host == "localhost" or is_loopback_address(host)


def check_bind_policy(config: BeamclawConfig) -> None:
    """Refuse a non-loopback bind without a usable gateway token (DESIGN.md section 7)."""
    http = config.gateway.http
    if is_loopback(http.host):
        return
    if http.token is None:
        raise GatewayConfigError(
            f"refusing to listen on {http.host} without a gateway token: set "
            f'[gateway.http] token = {{ env = "BEAMCLAW_GATEWAY_TOKEN" }} and export it, '
            f"or bind to 127.0.0.1"
        )
    if not http.token.is_available():
        raise GatewayConfigError(
            f"refusing to listen on {http.host}: the gateway token "
            f"({http.token.describe()}) is not set"
        )


def check_port_free(host: str, port: int) -> None:
    """Raise :class:`PortInUseError` when ``host:port`` cannot be bound."""
    if port == 0:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortInUseError(host, port) from exc
            raise GatewayConfigError(f"cannot bind {host}:{port}: {exc.strerror}") from exc


T = TypeVar("T")
Runner = Callable[[Coroutine[Any, Any, T]], T]


def loop_runner(choice: Literal["auto", "uvloop", "asyncio"]) -> tuple[str, Runner[Any]]:
    """The event loop ``[gateway.http] loop`` selects: its name and its ``run``.

    ``auto`` takes uvloop when it is installed; ``uvloop`` without it is a
    :class:`GatewayConfigError`.
    """
    if choice != "asyncio":
        try:
            import uvloop
        except ImportError as exc:
            if choice == "uvloop":
                raise GatewayConfigError(
                    '[gateway.http] loop = "uvloop" but uvloop is not installed '
                    '(pip install uvloop, or use loop = "auto")'
                ) from exc
        else:
            return "uvloop", uvloop.run
    return "asyncio", asyncio.run


def serve(config: BeamclawConfig) -> None:
    """Run the gateway until SIGINT/SIGTERM; returns after a clean shutdown.

    The runtime starts before the listener opens, so a start-up failure (database
    unreachable, home not writable) surfaces as one typed error, not a server traceback.
    """
    check_bind_policy(config)
    host = config.gateway.http.host
    port = effective_port(config)
    check_port_free(host, port)
    loop_name, run = loop_runner(config.gateway.http.loop)
    _usable, line = describe_llm_provider(config.core)
    print(line, flush=True)
    logger.info("event loop: {}", loop_name)
    with contextlib.suppress(KeyboardInterrupt):
        run(_serve(config, host, port))
    logger.info("gateway stopped")


def ui_banner(host: str, port: int, *, token_required: bool) -> str:
    """The start-up line naming the web page (never the token: this output may go to the
    daemon's log; ``beamclaw ui`` prints the signed-in address on a terminal)."""
    dial = "127.0.0.1" if host in ("0.0.0.0", "") else host  # noqa: S104 - a wildcard bind
    dial = "[::1]" if dial == "::" else (f"[{dial}]" if ":" in dial else dial)
    line = f"Web page: http://{dial}:{port}/ui/"
    if token_required:
        line += " (`beamclaw ui --open` opens it signed in with the gateway token)"
    return line


class _GatewayServer(uvicorn.Server):
    """uvicorn's server, minus re-raising the shutdown signal after serving, with a hook
    for when it listens.

    uvicorn re-raises SIGINT/SIGTERM once it has shut down, which for SIGTERM kills the
    process before the runtime's own shutdown (sessions persisted, pid file removed) can
    run. Here the first signal asks for a graceful exit and a second one forces it.
    """

    def __init__(
        self, config: uvicorn.Config, on_listening: Callable[[], None] | None = None
    ) -> None:
        """``on_listening``: called once the listener is up (the gateway warms its
        provider stack then)."""
        super().__init__(config)
        self._on_listening = on_listening

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        if self.started and self._on_listening is not None:
            self._on_listening()

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit:
            self.force_exit = True
        else:
            self.should_exit = True


def _warm(runtime: GatewayRuntime, app: GatewayApp) -> None:
    """Once listening: build the API (the probes answered without it), then import the
    provider stack and tune the collector (:meth:`GatewayRuntime.warm`), in a worker
    thread one after the other."""
    app.warm(then=runtime.warm)


async def _serve(config: BeamclawConfig, host: str, port: int) -> None:
    runtime = GatewayRuntime(config)
    try:
        await runtime.start()
        app = create_app(runtime)
        server = _GatewayServer(
            uvicorn.Config(
                app,
                host=host,
                port=port,
                log_level="warning",
                lifespan="on",
                access_log=False,
                server_header=False,
                ws_ping_interval=config.gateway.ws.ping_interval_seconds,
                ws_ping_timeout=config.gateway.ws.ping_interval_seconds,
                timeout_graceful_shutdown=config.gateway.http.shutdown_grace_seconds,
            ),
            on_listening=lambda: _warm(runtime, app),
        )
        print(f"BeamClaw gateway listening on http://{host}:{port} (Ctrl-C to stop)", flush=True)
        print(
            ui_banner(host, port, token_required=config.gateway.http.token is not None), flush=True
        )
        await server.serve()
        if not server.started:
            raise GatewayConfigError(f"the HTTP listener on {host}:{port} failed to start")
    finally:
        await runtime.stop()
