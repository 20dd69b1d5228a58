"""Storage backends behind one protocol (:class:`Store`)."""

from memoryd.storage.base import Store
from memoryd.storage.records import RecordStore
from memoryd.storage.registry import BACKENDS, RECORD_BACKENDS, build_record_store, build_store

__all__ = [
    "BACKENDS",
    "RECORD_BACKENDS",
    "RecordStore",
    "Store",
    "build_record_store",
    "build_store",
]
