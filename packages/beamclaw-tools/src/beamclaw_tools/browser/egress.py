"""The browser's egress guard: a local HTTP proxy applying the ``web_fetch`` address rules.

Chromium is launched with this proxy for every scheme (loopback included: the implicit
loopback bypass is switched off), so every request it makes — navigations, sub-resources,
*each hop of a redirect*, WebSockets — arrives here as ``CONNECT host:port`` or an
absolute-form ``GET http://…``. A request route handler cannot do this: Playwright does
not route the hops of a redirect.

Invariants: the proxy resolves the host itself, refuses when any resolved address is
refused by :func:`~beamclaw_tools.netguard.address_refusal`, and connects to the vetted
address (a DNS answer changing between check and connect cannot reach a private address).
A refusal answers ``403`` and is remembered (:meth:`EgressGuard.take_refusals`) so the tool
can tell the model why a page did not load. The proxy listens on 127.0.0.1 only.
"""

from __future__ import annotations

import asyncio
import contextlib
from urllib.parse import urlsplit

from beamclaw_obs import cancel_and_wait
from beamclaw_tools.netguard import (
    IPAddress,
    NetworkPolicy,
    Resolver,
    address_refusal,
    literal_address,
    system_resolver,
)

MAX_HEAD_BYTES = 64 * 1024
"""Largest request head (request line + headers) accepted from the browser."""
REFUSED_HEADER = "X-BeamClaw-Refused"
"""Header on the proxy's own 403 answers (a site's 403 does not carry it)."""
_HOP_HEADERS = frozenset({"proxy-connection", "proxy-authorization", "connection", "keep-alive"})


class EgressGuard:
    """A CONNECT/HTTP forward proxy for one browser; ``start`` → ``server`` URL → ``close``."""

    def __init__(self, policy: NetworkPolicy, resolver: Resolver = system_resolver) -> None:
        self._policy = policy
        self._resolver = resolver
        self._server: asyncio.Server | None = None
        self._refusals: list[str] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def server(self) -> str:
        """``http://127.0.0.1:<port>`` (after :meth:`start`)."""
        assert self._server is not None, "EgressGuard.start() first"
        port = self._server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}"

    async def start(self) -> None:
        self._server = await asyncio.start_server(self._serve, "127.0.0.1", 0)

    async def close(self) -> None:
        """Stop listening and end every connection (closing its socket, so each handler
        finishes on its own; one still stuck after a second is cancelled)."""
        if self._server is not None:
            self._server.close()
            self._server = None
        for writer in list(self._writers):
            writer.close()
        if self._tasks:
            _done, stuck = await asyncio.wait(set(self._tasks), timeout=1.0)
            await cancel_and_wait(stuck)

    def take_refusals(self) -> list[str]:
        """Refusals since the last call (oldest first), then forgotten."""
        out, self._refusals = self._refusals, []
        return out

    async def vet(self, host: str, port: int) -> IPAddress | str:
        """The address to connect to, or why the target is refused (``cannot resolve …``
        when DNS has no answer)."""
        literal = literal_address(host)
        if literal is not None:
            addresses = [literal]
        else:
            try:
                addresses = await self._resolver(host, port)
            except OSError as e:
                return f"cannot resolve {host}: {e}"
            if not addresses:
                return f"cannot resolve {host}: no addresses"
        for address in addresses:
            reason = address_refusal(address, port, host, self._policy)
            if reason is not None:
                return reason
        return addresses[0]

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        task = asyncio.current_task()
        assert task is not None
        self._tasks.add(task)  # pyright: ignore[reportArgumentType]
        self._writers.add(writer)
        try:
            await self._handle(reader, writer)
        except (OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass  # the browser hung up or sent garbage: the connection just ends
        finally:
            self._tasks.discard(task)  # pyright: ignore[reportArgumentType]
            self._writers.discard(writer)
            writer.close()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > MAX_HEAD_BYTES:
            return
        request_line, *header_lines = head.decode("latin-1").split("\r\n")
        method, target, version = request_line.split(" ", 2)
        if method.upper() == "CONNECT":
            host, _, port_text = target.rpartition(":")
            host, port, rest = host.strip("[]"), int(port_text), b""
            shown = f"https://{target}"
        else:
            parts = urlsplit(target)
            if parts.scheme != "http" or not parts.hostname:
                await self._refuse(writer, target, "only http and https URLs are fetched")
                return
            host, port = parts.hostname, parts.port or 80
            path = parts.path or "/"
            if parts.query:
                path += "?" + parts.query
            kept = [h for h in header_lines if h and h.split(":", 1)[0].lower() not in _HOP_HEADERS]
            rest = "\r\n".join([f"{method} {path} {version}", *kept, "Connection: close", "", ""])
            shown = target
        vetted = await self.vet(host, port)
        if isinstance(vetted, str):
            await self._refuse(writer, shown, vetted, record=not vetted.startswith("cannot"))
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(str(vetted), port)
            self._writers.add(up_writer)
        except OSError as e:
            body = f"cannot connect to {host}:{port}: {e.strerror or e}".encode()
            writer.write(
                f"HTTP/1.1 502 Bad Gateway\r\nContent-Length: {len(body)}\r\n\r\n".encode() + body
            )
            await writer.drain()
            return
        if rest:
            up_writer.write(rest.encode("latin-1"))
        else:
            writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
            await writer.drain()
        pipes = {
            asyncio.ensure_future(_pipe(reader, up_writer)),
            asyncio.ensure_future(_pipe(up_reader, writer)),
        }
        try:
            await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for pipe in pipes:
                pipe.cancel()
            await asyncio.gather(*pipes, return_exceptions=True)
            self._writers.discard(up_writer)
            up_writer.close()

    async def _refuse(
        self, writer: asyncio.StreamWriter, url: str, reason: str, *, record: bool = True
    ) -> None:
        if record:  # a name that does not resolve is the page's problem, not a refusal
            self._refusals.append(f"refused {url}: {reason}")
        body = f"BeamClaw refused {url}: {reason}".encode()
        writer.write(
            b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
            + f"{REFUSED_HEADER}: 1\r\n".encode()
            + f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode()
            + body
        )
        await writer.drain()


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(65536):
            writer.write(chunk)
            await writer.drain()
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            if writer.can_write_eof():
                writer.write_eof()


__all__ = ["REFUSED_HEADER", "EgressGuard"]
