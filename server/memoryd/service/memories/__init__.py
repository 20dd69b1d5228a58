"""Long-term memories: remember, recall (vector, full-text, hybrid; scoring, time,
context, feedback), get, list, update, forget; deduplication and contradictions."""
