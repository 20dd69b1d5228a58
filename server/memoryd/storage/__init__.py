"""Storage backends behind one protocol (:class:`Store`)."""

from memoryd.storage.base import Store
from memoryd.storage.registry import BACKENDS, build_store

__all__ = ["BACKENDS", "Store", "build_store"]
