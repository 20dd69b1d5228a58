"""FallbackEmbedder's time limit grows with the batch: a big batch on a slow model is
not a stalled provider, while one text stuck past the limit still falls back."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from memoryd.embedding import EmbedKind, HashingEmbedder
from memoryd.resilience.degradation import ComponentStates
from memoryd.resilience.embedder import FallbackEmbedder

CHUNK = 64
#: Seconds the provider takes per chunk of CHUNK texts (a slow local model).
PER_CHUNK_S = 0.25
LIMIT_S = 0.5


class SlowModel:
    """A real HashingEmbedder (a different space than the fallback's) taking
    PER_CHUNK_S per chunk, or ``stall_s`` for the whole call when set."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(48)
        self.stall_s = 0.0

    @property
    def model_id(self) -> str:
        return "slow-model"

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(
        self, texts: Sequence[str], *, kind: EmbedKind = "document"
    ) -> npt.NDArray[np.float32]:
        chunks = -(-len(texts) // CHUNK)
        await asyncio.sleep(self.stall_s or PER_CHUNK_S * chunks)
        return await self.inner.embed(texts, kind=kind)

    async def close(self) -> None:
        return None


def embedder(model: SlowModel) -> FallbackEmbedder:
    return FallbackEmbedder(model, states=ComponentStates(), timeout_s=LIMIT_S, timeout_texts=CHUNK)


async def test_a_big_batch_gets_a_limit_per_chunk() -> None:
    texts = [f"memory {i}" for i in range(4 * CHUNK)]  # 1.0 s of work, 2.0 s allowed
    _, space = await embedder(SlowModel()).embed_in_space(texts)
    assert space == "slow-model"


async def test_a_stalled_call_still_falls_back() -> None:
    model = SlowModel()
    model.stall_s = 3 * LIMIT_S
    fallback = embedder(model)
    _, space = await fallback.embed_in_space(["one text"])
    assert space == fallback.fallback_model_id
