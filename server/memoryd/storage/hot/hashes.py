"""Content hash -> slots of a hot partition: exact-duplicate lookups (``find_by_content``)
answered in memory instead of by a store query on every Remember."""

from __future__ import annotations

from collections.abc import Iterable

from memoryd.text import content_hash

#: Rough bytes per entry (the hash string, a set slot, a dict slot and the reverse map).
ENTRY_BYTES = 200


class ContentHashes:
    def __init__(self) -> None:
        self._slots: dict[str, set[int]] = {}
        self._hash_of: dict[int, str] = {}

    def __len__(self) -> int:
        return len(self._hash_of)

    def put(self, slot: int, content: str) -> None:
        self.drop(slot)
        digest = content_hash(content)
        self._hash_of[slot] = digest
        self._slots.setdefault(digest, set()).add(slot)

    def drop(self, slot: int) -> None:
        digest = self._hash_of.pop(slot, None)
        if digest is None:
            return
        holders = self._slots[digest]
        holders.discard(slot)
        if not holders:
            del self._slots[digest]

    def slots(self, digests: Iterable[str]) -> set[int]:
        found: set[int] = set()
        for digest in digests:
            found |= self._slots.get(digest, set())
        return found

    def nbytes(self) -> int:
        return len(self._hash_of) * ENTRY_BYTES
