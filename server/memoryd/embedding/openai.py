"""Embedder for any OpenAI-compatible ``POST /embeddings`` endpoint (OpenAI, vLLM,
llama.cpp, TEI, Ollama, ...).

The dimension is required up front rather than probed: the store needs it before
the first write, and the daemon must be able to start while the provider is down.
Every response is checked against it.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import httpx
import numpy as np
import numpy.typing as npt

from memoryd.domain.errors import EmbeddingError
from memoryd.embedding.base import CheckedEmbedder, EmbedKind, l2_normalize

_BODY_SNIPPET = 200


class OpenAICompatibleEmbedder(CheckedEmbedder):
    """Sends batches of at most ``max_batch_size`` texts, one request at a time."""

    def __init__(
        self,
        *,
        url: str,
        model: str,
        dimension: int,
        api_key: str | None = None,
        timeout_s: float = 10.0,
        max_batch_size: int = 64,
    ) -> None:
        if dimension < 1 or max_batch_size < 1 or timeout_s <= 0:
            raise ValueError("dimension and max_batch_size must be >= 1, timeout_s > 0")
        super().__init__(f"openai:{model}", dimension)
        self._endpoint = url.rstrip("/") + "/embeddings"
        self._model = model
        self._api_key = api_key or None
        self._max_batch_size = max_batch_size
        self._timeout_s = timeout_s
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(timeout=timeout_s, headers=headers)

    async def _embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        """The OpenAI API has no query/document distinction, so ``kind`` is unused."""
        parts = [
            await self._embed_batch(list(texts[start : start + self._max_batch_size]))
            for start in range(0, len(texts), self._max_batch_size)
        ]
        return np.concatenate(parts) if len(parts) > 1 else parts[0]

    async def close(self) -> None:
        await self._client.aclose()

    async def _embed_batch(self, batch: list[str]) -> npt.NDArray[np.float32]:
        payload = {"model": self._model, "input": batch}
        try:
            response = await self._client.post(self._endpoint, json=payload)
        except httpx.TimeoutException as exc:
            detail = f"timed out after {self._timeout_s:g}s ({type(exc).__name__})"
            raise self._error(detail) from exc
        except httpx.HTTPError as exc:
            raise self._error(f"request failed: {type(exc).__name__}: {exc}") from exc
        if not response.is_success:
            snippet = response.text[:_BODY_SNIPPET]
            raise self._error(f"HTTP {response.status_code}: {snippet}")
        try:
            body = response.json()
        except ValueError as exc:
            raise self._error(f"response is not JSON: {exc}") from exc
        return l2_normalize(self._parse(body, len(batch)))

    def _parse(self, body: Any, expected: int) -> npt.NDArray[np.float32]:
        """The vectors of a response body, ordered by ``index``; strict about shape."""
        data = body.get("data") if isinstance(body, dict) else None
        if not isinstance(data, list):
            raise self._error("malformed response: no 'data' list")
        if len(data) != expected:
            raise self._error(f"malformed response: {len(data)} embeddings for {expected} inputs")
        out = np.empty((expected, self.dimension), dtype=np.float32)
        seen: set[int] = set()
        for position, item in enumerate(data):
            if not isinstance(item, dict):
                raise self._error(f"malformed response: data[{position}] is not an object")
            index = item.get("index", position)
            vector = item.get("embedding")
            if not isinstance(index, int) or not 0 <= index < expected or index in seen:
                raise self._error(f"malformed response: bad index {index!r}")
            if not isinstance(vector, list) or not all(
                isinstance(x, int | float) and not isinstance(x, bool) for x in vector
            ):
                raise self._error(f"malformed response: data[{position}].embedding")
            if len(vector) != self.dimension:
                raise self._error(
                    f"dimension mismatch: model returned {len(vector)}, "
                    f"expected {self.dimension} (embedding.openai_dimension)"
                )
            if not all(math.isfinite(x) for x in vector):
                raise self._error(f"malformed response: non-finite value in data[{position}]")
            seen.add(index)
            out[index] = vector
        return out

    def _error(self, detail: str) -> EmbeddingError:
        message = f"embedding provider {self._endpoint} ({self._model}): {detail}"
        if self._api_key:
            message = message.replace(self._api_key, "***")
        return EmbeddingError(message)
