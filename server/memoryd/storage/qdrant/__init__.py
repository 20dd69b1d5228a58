"""The Qdrant backend: a Qdrant server (gRPC preferred), qdrant-client's local mode
on disk, or Qdrant Edge in-process (edge.py)."""

from memoryd.storage.qdrant.engine import QdrantOptions
from memoryd.storage.qdrant.records import QdrantRecordStore
from memoryd.storage.qdrant.store import QdrantStore

__all__ = ["QdrantOptions", "QdrantRecordStore", "QdrantStore"]
