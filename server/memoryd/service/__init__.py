"""Backend-agnostic service logic: validation, embedding, scoring, batching."""
