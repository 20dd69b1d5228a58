"""Per-agent state beside memories: working memory per scope (TTL, JSON Schema), the
agent profile (etag) and saved component state (SaveState / LoadState)."""
