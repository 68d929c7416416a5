"""Embedders: the port and the OpenAI-compatible ``/v1/embeddings`` client.

The client batches inputs (``batch_size`` per request), truncates each to
``max_input_chars``, resolves its API key from a :class:`beamclaw_obs.Secret` at every
request (never at construction) and turns every failure into an :class:`EmbeddingError`
subclass with a secret-free reason. It never retries: the caller degrades to keyword
search and tries again on the next search. numpy is imported by the first response
parsed and httpx when a client is built (embeddings configured), not with this module:
the gateway imports it at start whether or not embeddings are configured.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from beamclaw_memory.errors import (
    EmbeddingDimensionError,
    EmbeddingResponseError,
    EmbeddingUnavailableError,
)
from beamclaw_memory.settings import EmbeddingSettings
from beamclaw_obs import EventType, MissingSecretError, emit, scrub

if TYPE_CHECKING:
    import httpx
    import numpy as np


@runtime_checkable
class Embedder(Protocol):
    """Turns texts into vectors. ``embed`` returns one vector per input, in order."""

    @property
    def model(self) -> str: ...

    @property
    def dimensions(self) -> int | None:
        """The expected vector size, or None when it is learned from the first answer."""
        ...

    async def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        """Raises :class:`beamclaw_memory.EmbeddingError` subclasses on failure."""
        ...

    async def aclose(self) -> None: ...


class OpenAIEmbedder:
    """Client for an OpenAI-compatible ``POST {base_url}/embeddings``."""

    def __init__(
        self,
        settings: EmbeddingSettings,
        *,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        if not settings.base_url:
            raise ValueError("memory.embeddings.base_url is not set")
        import httpx

        self._settings = settings
        self._url = settings.base_url.rstrip("/") + "/embeddings"
        self._client = httpx.AsyncClient(timeout=settings.timeout, transport=transport)

    @property
    def model(self) -> str:
        return self._settings.model

    @property
    def dimensions(self) -> int | None:
        return self._settings.dimensions

    def _headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        key = self._settings.api_key
        if key is not None:
            try:
                headers["authorization"] = f"Bearer {key.resolve('memory.embeddings.api_key')}"
            except MissingSecretError as exc:
                raise EmbeddingUnavailableError(self.model, str(exc)) from exc
        return headers

    async def embed(self, texts: Sequence[str]) -> list[np.ndarray]:
        out: list[np.ndarray] = []
        limit = self._settings.max_input_chars
        size = self._settings.batch_size
        for start in range(0, len(texts), size):
            batch = [t[:limit] if t.strip() else " " for t in texts[start : start + size]]
            out.extend(await self._request(batch))
        return out

    async def _request(self, batch: list[str]) -> list[np.ndarray]:
        body: dict[str, Any] = {"model": self.model, "input": batch, "encoding_format": "float"}
        if self.dimensions is not None:
            body["dimensions"] = self.dimensions
        import httpx

        started = time.monotonic()
        ok = False
        try:
            try:
                response = await self._client.post(self._url, json=body, headers=self._headers())
            except httpx.TimeoutException as exc:
                raise EmbeddingUnavailableError(
                    self.model, f"timed out after {self._settings.timeout:g}s"
                ) from exc
            except httpx.HTTPError as exc:
                raise EmbeddingUnavailableError(
                    self.model, f"request failed: {type(exc).__name__}: {scrub(str(exc))}"
                ) from exc
            if response.status_code >= 400:
                raise EmbeddingUnavailableError(
                    self.model,
                    f"HTTP {response.status_code}: {scrub(response.text[:200])}",
                )
            vectors = self._parse(response, len(batch))
            ok = True
            return vectors
        finally:
            emit(
                EventType.EMBEDDING_REQUEST,
                model=self.model,
                inputs=len(batch),
                duration_ms=round((time.monotonic() - started) * 1000, 1),
                success=ok,
            )

    def _parse(self, response: httpx.Response, count: int) -> list[np.ndarray]:
        import numpy as np  # loads with the first response, not with the client

        try:
            payload = response.json()
            items = sorted(payload["data"], key=lambda item: int(item.get("index", 0)))
            vectors = [np.asarray(item["embedding"], dtype=np.float32) for item in items]
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise EmbeddingResponseError(self.model, f"malformed response: {exc}") from exc
        if len(vectors) != count:
            raise EmbeddingResponseError(
                self.model, f"asked for {count} vectors, got {len(vectors)}"
            )
        for vector in vectors:
            if vector.ndim != 1 or vector.size == 0:
                raise EmbeddingResponseError(self.model, "an embedding is not a flat vector")
            if self.dimensions is not None and vector.shape[0] != self.dimensions:
                raise EmbeddingDimensionError(self.model, self.dimensions, int(vector.shape[0]))
        return vectors

    async def aclose(self) -> None:
        await self._client.aclose()
