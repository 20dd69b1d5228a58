"""The resilience section of the settings (config.Settings)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class ResilienceSettings(BaseModel):
    """Timeouts, circuit breakers and the embedding fallback (memoryd/resilience)."""

    #: A call to the embedding provider slower than this per embedding.max_batch_size
    #: texts falls back to hashing (a batch of 1,000 gets 16 times as long).
    embedder_timeout_s: float = Field(5.0, gt=0)
    #: Consecutive provider failures before callers skip it (until a probe succeeds).
    embedder_failure_threshold: int = Field(2, ge=1)
    #: Seconds before the first half-open probe of a failed provider (doubles, capped).
    embedder_probe_after_s: float = Field(2.0, gt=0)
    #: How often memories written in the fallback space are looked for and re-embedded.
    reembed_interval_s: float = Field(5.0, gt=0)
    reembed_batch: int = Field(64, ge=1, le=4096)
