"""Content-addressed LRU cache in front of any embedder.

Memories are often re-embedded with identical text (updates that only touch tags,
repeated recall queries), so a small cache saves most model calls.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memoryd.domain.errors import EmbeddingError
from memoryd.embedding.base import CheckedEmbedder, Embedder, EmbedKind

_Key = tuple[str, bytes]


def _digest(text: str) -> bytes:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()


class CachingEmbedder(CheckedEmbedder):
    """LRU of ``(kind, sha256(text)) -> vector`` with ``max_entries`` entries.

    Misses of one call go to the inner embedder in one batched call, each distinct
    text once. ``misses`` counts texts sent to the inner embedder, ``hits`` texts
    answered without it (including repeats of a text within the same call).
    Concurrent calls missing on the same text may both embed it; that costs time
    only, never correctness.
    """

    def __init__(self, inner: Embedder, max_entries: int) -> None:
        if max_entries < 1:
            raise ValueError(f"max_entries must be >= 1, got {max_entries}")
        super().__init__(inner.model_id, inner.dimension)
        self.inner = inner
        self.max_entries = max_entries
        self.hits = 0
        self.misses = 0
        self._entries: OrderedDict[_Key, npt.NDArray[np.float32]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    async def _embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        keys: list[_Key] = [(kind, _digest(text)) for text in texts]
        found: dict[_Key, npt.NDArray[np.float32]] = {}
        missing: dict[_Key, str] = {}
        for key, text in zip(keys, texts, strict=True):
            if key in found or key in missing:
                continue
            vector = self._entries.get(key)
            if vector is None:
                missing[key] = text
            else:
                self._entries.move_to_end(key)
                found[key] = vector
        if missing:
            vectors = await self.inner.embed(list(missing.values()), kind=kind)
            if vectors.shape != (len(missing), self.dimension):
                raise EmbeddingError(
                    f"{self.inner.model_id} returned shape {vectors.shape}, "
                    f"expected {(len(missing), self.dimension)}"
                )
            for key, row in zip(missing, vectors, strict=True):
                stored = np.array(row, dtype=np.float32)  # a copy, detached from the batch
                stored.flags.writeable = False
                found[key] = stored
                self._put(key, stored)
        self.misses += len(missing)
        self.hits += len(texts) - len(missing)
        out = np.empty((len(texts), self.dimension), dtype=np.float32)
        for row, key in enumerate(keys):
            out[row] = found[key]
        return out

    def clear(self) -> None:
        self._entries.clear()

    async def close(self) -> None:
        await self.inner.close()

    def _put(self, key: _Key, vector: npt.NDArray[np.float32]) -> None:
        self._entries[key] = vector
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)
