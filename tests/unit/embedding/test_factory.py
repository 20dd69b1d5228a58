"""build_embedder maps settings to the right embedder and cache."""

from __future__ import annotations

from memoryd.config import EmbeddingSettings
from memoryd.embedding import CachingEmbedder, Embedder, HashingEmbedder
from memoryd.embedding.factory import build_embedder


async def test_hashing_without_cache() -> None:
    built = build_embedder("hashing", EmbeddingSettings(hashing_dimension=64, cache_size=0))
    assert isinstance(built, HashingEmbedder)
    assert isinstance(built, Embedder)
    assert (built.model_id, built.dimension) == ("hashing-v1-64", 64)


async def test_cache_wraps_when_enabled() -> None:
    built = build_embedder("hashing", EmbeddingSettings(hashing_dimension=32, cache_size=5))
    assert isinstance(built, CachingEmbedder)
    assert isinstance(built.inner, HashingEmbedder)
    assert built.max_entries == 5
    await built.close()
