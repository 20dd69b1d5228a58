"""Text handling shared by the service and the stores: content normalisation (for
exact-duplicate detection) and the tokenizer behind full-text search."""

from memoryd.text.normalize import content_hash, normalise_content
from memoryd.text.tokens import tokenize

__all__ = ["content_hash", "normalise_content", "tokenize"]
