"""Fixtures for beamclaw-tools tests: a session with a workspace, local HTTP servers."""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from beamclaw_obs import Event, get_emitter
from beamclaw_tools import SessionRef


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
def session(workspace: Path) -> SessionRef:
    return SessionRef(session_id="s-1", agent_id="default", workspace=workspace)


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict[str, str])


@dataclass
class LocalServer:
    """A real HTTP server on 127.0.0.1 answering from a route table."""

    routes: dict[str, Reply | Callable[[BaseHTTPRequestHandler], Reply]]
    requests: list[dict[str, object]] = field(default_factory=list[dict[str, object]])
    port: int = 0

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"


def _serve(server: LocalServer) -> tuple[ThreadingHTTPServer, threading.Thread]:
    class Handler(BaseHTTPRequestHandler):
        def _handle(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            body = self.rfile.read(length) if length else b""
            server.requests.append(
                {
                    "method": self.command,
                    "path": self.path,
                    "headers": dict(self.headers),
                    "body": body,
                }
            )
            route = server.routes.get(self.path.split("?")[0])
            reply = (
                Reply(404, b"not found")
                if route is None
                else (route(self) if callable(route) else route)
            )
            self.send_response(reply.status)
            for k, v in reply.headers.items():
                self.send_header(k, v)
            self.send_header("Content-Length", str(len(reply.body)))
            self.end_headers()
            if self.command != "HEAD":
                self.wfile.write(reply.body)

        do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _handle  # noqa: N815

        def log_message(self, format: str, *args: object) -> None:
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    return httpd, thread


@pytest.fixture
def http_server() -> Iterator[Callable[[dict[str, object]], LocalServer]]:
    started: list[ThreadingHTTPServer] = []

    def start(routes: dict[str, object]) -> LocalServer:
        server = LocalServer(routes=routes)  # type: ignore[arg-type]
        httpd, _ = _serve(server)
        started.append(httpd)
        return server

    yield start
    for httpd in started:
        httpd.shutdown()
        httpd.server_close()


class Recorder:
    name = "test-recorder"

    def __init__(self) -> None:
        self.events: list[Event] = []

    def handle(self, event: Event) -> None:
        self.events.append(event)

    def close(self) -> None:
        return


@pytest.fixture
def recorder() -> Iterator[Recorder]:
    rec = Recorder()
    emitter = get_emitter()
    emitter.add_backend(rec)
    yield rec
    emitter.remove_backend(rec.name)
