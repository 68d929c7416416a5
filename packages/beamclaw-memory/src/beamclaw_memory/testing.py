"""Test doubles that ship with the package (no network, deterministic).

* :class:`HashingEmbedder`: an :class:`~beamclaw_memory.Embedder` that hashes character
  n-grams and words into a fixed-size vector, so texts sharing spelling (``running`` /
  ``runs``, ``Zürich`` / ``Zurich``) are near and unrelated texts are far. Same text, same
  vector, on every machine.
* :class:`FakeEmbeddingServer`: a real ``POST /v1/embeddings`` HTTP server on 127.0.0.1
  that answers with :class:`HashingEmbedder` vectors and can be told to fail (status
  code), stall (delay) or return vectors of the wrong size.
* :class:`CountingNotifier`: the real inotify instance of a
  :class:`~beamclaw_memory.ChangeWatch`, counting the events read from it.
"""

from __future__ import annotations

import asyncio
import unicodedata
import zlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from aiohttp import web

from beamclaw_memory.indexing.watch import open_notifier
from beamclaw_memory.search.tokenizer import normalise


def _fold(text: str) -> str:
    """Normalised, case-folded text with diacritics removed."""
    decomposed = unicodedata.normalize("NFKD", normalise(text))
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


class HashingEmbedder:
    """Deterministic hashed n-gram embeddings (a test double for a real model).

    Args:
        dimensions: vector size.
        model: the model name reported (cache keys include it).
        ngram: character n-gram length (words are padded with spaces).
    """

    def __init__(self, dimensions: int = 256, model: str = "hashing-ngram", ngram: int = 3) -> None:
        self._dimensions = dimensions
        self._model = model
        self._ngram = ngram
        self.calls = 0
        self.texts_embedded = 0

    @property
    def model(self) -> str:
        return self._model

    @property
    def dimensions(self) -> int | None:
        return self._dimensions

    def vector(self, text: str) -> np.ndarray:
        """The embedding of one text (unit length; zero for text without words)."""
        out = np.zeros(self._dimensions, dtype=np.float32)
        n = self._ngram
        for word in _fold(text).split():
            word = "".join(ch for ch in word if ch.isalnum())
            if not word:
                continue
            padded = f" {word} "
            grams = [padded[i : i + n] for i in range(max(1, len(padded) - n + 1))]
            for gram in [*grams, f"w:{word}"]:
                h = zlib.crc32(gram.encode("utf-8"))
                sign = 1.0 if (h >> 31) & 1 else -1.0
                out[h % self._dimensions] += sign * (2.0 if gram.startswith("w:") else 1.0)
        norm = float(np.linalg.norm(out))
        return out / norm if norm > 0 else out

    async def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        self.calls += 1
        self.texts_embedded += len(texts)
        return [self.vector(t) for t in texts]

    async def aclose(self) -> None:
        return None


@dataclass
class RecordedRequest:
    """One request the fake server received."""

    model: str
    inputs: list[str]
    dimensions: int | None
    authorization: str | None


@dataclass
class FakeEmbeddingServer:
    """An OpenAI-compatible embeddings endpoint on 127.0.0.1 for tests.

    Use as ``async with FakeEmbeddingServer() as server:`` and point
    ``[memory.embeddings] base_url`` at ``server.base_url``. Change ``status``,
    ``delay`` or ``dimensions_override`` between requests to script failures.
    """

    dimensions: int = 64
    status: int = 200
    delay: float = 0.0
    dimensions_override: int | None = None
    requests: list[RecordedRequest] = field(default_factory=list)
    _runner: web.AppRunner | None = None
    _port: int = 0

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._port}/v1"

    @property
    def inputs_seen(self) -> int:
        return sum(len(r.inputs) for r in self.requests)

    async def _handle(self, request: web.Request) -> web.Response:
        body: dict[str, Any] = await request.json()
        raw = body.get("input", [])
        inputs = [raw] if isinstance(raw, str) else [str(x) for x in raw]
        requested = body.get("dimensions")
        self.requests.append(
            RecordedRequest(
                model=str(body.get("model", "")),
                inputs=inputs,
                dimensions=int(requested) if requested is not None else None,
                authorization=request.headers.get("Authorization"),
            )
        )
        if self.delay:
            await asyncio.sleep(self.delay)
        if self.status != 200:
            return web.json_response(
                {"error": {"message": "scripted failure", "type": "server_error"}},
                status=self.status,
            )
        size = self.dimensions_override or (int(requested) if requested else self.dimensions)
        embedder = HashingEmbedder(dimensions=size, model=str(body.get("model", "")))
        data = [
            {"object": "embedding", "index": i, "embedding": embedder.vector(t).tolist()}
            for i, t in enumerate(inputs)
        ]
        return web.json_response(
            {
                "object": "list",
                "data": data,
                "model": body.get("model"),
                "usage": {"prompt_tokens": 0, "total_tokens": 0},
            }
        )

    async def start(self) -> FakeEmbeddingServer:
        app = web.Application()
        app.router.add_post("/v1/embeddings", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0)
        await site.start()
        self._port = int(self._runner.addresses[0][1])
        return self

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def __aenter__(self) -> FakeEmbeddingServer:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


class CountingNotifier:
    """The real inotify instance (``ChangeWatch(notifier=lambda: counting)``), counting
    the events read from it: how a test sees that a write wakes no watch."""

    def __init__(self) -> None:
        notifier = open_notifier()
        if notifier is None:
            raise RuntimeError("no inotify instance to be had (not Linux, or none left)")
        self.inner = notifier
        self.events = 0

    def add_watch(self, path: str, mask: int) -> int:
        return self.inner.add_watch(path, mask)

    def read(self, timeout: int | None = None) -> list[object]:
        events = list(self.inner.read(timeout))
        self.events += len(events)
        return events

    def close(self) -> None:
        self.inner.close()
