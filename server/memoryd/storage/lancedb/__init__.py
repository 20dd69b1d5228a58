"""The embedded LanceDB backend."""

from memoryd.storage.lancedb.store import LanceDBStore

__all__ = ["LanceDBStore"]
