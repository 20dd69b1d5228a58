"""Embedders behind one protocol: local MiniLM (default; ``memoryd.embedding.local``,
not imported here because it loads onnxruntime), multilingual e5 (optional extra),
OpenAI-compatible HTTP, and feature hashing (always available fallback), optionally
behind an LRU cache."""

from memoryd.embedding.base import Embedder, EmbedKind
from memoryd.embedding.cache import CachingEmbedder
from memoryd.embedding.factory import build_embedder
from memoryd.embedding.hashing import HashingEmbedder
from memoryd.embedding.multilingual import MultilingualE5Embedder
from memoryd.embedding.openai import OpenAICompatibleEmbedder

__all__ = [
    "CachingEmbedder",
    "EmbedKind",
    "Embedder",
    "HashingEmbedder",
    "MultilingualE5Embedder",
    "OpenAICompatibleEmbedder",
    "build_embedder",
]
