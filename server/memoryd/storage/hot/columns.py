"""The fields a MemoryFilter reads, one NumPy column each, indexed by a hot partition's
slots (used by HotPartition): a filter becomes a handful of vectorised comparisons
(``mask``) instead of a Python test per memory. Namespaces and embedding models are
held as small integer codes, tags as slot sets; ids as UTF-8 bytes, the order that
hot/order.py breaks ties in.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from memoryd.domain.models import Memory, MemoryFilter, MemoryType, SecurityLevel, TagMatch
from memoryd.storage.hot.rows import grown, source_code, trust_codes
from memoryd.storage.instants import to_micros

Slots = npt.NDArray[np.intp]
Mask = npt.NDArray[np.bool_]

_NO_EXPIRY = np.iinfo(np.int64).max
_TYPE_CODE = {t: i for i, t in enumerate(MemoryType)}


class FilterColumns:
    """One partition's filter fields by slot; a slot not alive matches nothing."""

    def __init__(self) -> None:
        self.alive = np.zeros(0, dtype=bool)
        #: created_at in microseconds (list pages are ordered by it).
        self.created = np.zeros(0, dtype=np.int64)
        self._expires = np.zeros(0, dtype=np.int64)
        self._security = np.zeros(0, dtype=np.int8)
        self._type = np.zeros(0, dtype=np.int8)
        self._source = np.zeros(0, dtype=np.int8)
        self._archived = np.zeros(0, dtype=bool)
        self._namespace = np.zeros(0, dtype=np.int32)
        #: Ids as UTF-8 bytes (the same order as the strings): ties in a search or a
        #: list page are put in id order by NumPy (hot/order.py), not by Python.
        self.ids = np.zeros(0, dtype="S1")
        self._namespace_code: dict[str, int] = {}
        #: The embedding model of each slot: the embedding fallback keeps its own
        #: vector space apart with filters on it (resilience/embedder.py).
        self._model = np.zeros(0, dtype=np.int16)
        self._model_code: dict[str, int] = {}
        self._tag_slots: dict[str, set[int]] = {}

    def grow(self, capacity: int) -> None:
        """Make every column ``capacity`` rows long (the new slots not alive)."""
        self.alive = grown(self.alive, capacity)
        self.created = grown(self.created, capacity)
        self._expires = grown(self._expires, capacity)
        self._security = grown(self._security, capacity)
        self._type = grown(self._type, capacity)
        self._source = grown(self._source, capacity)
        self._archived = grown(self._archived, capacity)
        self._namespace = grown(self._namespace, capacity)
        self.ids = grown(self.ids, capacity)
        self._model = grown(self._model, capacity)

    def put(self, slots: Slots, memories: Sequence[Memory]) -> None:
        """Set the fields of each slot from its memory, and make the slots alive. A
        slot that held another memory must have been ``forget``-ed first."""
        namespaces = np.empty(len(memories), dtype=np.int32)
        models = np.empty(len(memories), dtype=np.int16)
        for i, (slot, memory) in enumerate(zip(slots.tolist(), memories, strict=True)):
            namespaces[i] = self._namespace_code.setdefault(
                memory.namespace, len(self._namespace_code)
            )
            models[i] = self._model_code.setdefault(memory.embedding_model, len(self._model_code))
            for tag in memory.tags:
                self._tag_slots.setdefault(tag, set()).add(slot)
        self.alive[slots] = True
        self.created[slots] = [to_micros(m.created_at) for m in memories]
        self._expires[slots] = [
            _NO_EXPIRY if m.expires_at is None else to_micros(m.expires_at) for m in memories
        ]
        self._security[slots] = [int(m.security_level) for m in memories]
        self._type[slots] = [_TYPE_CODE[MemoryType(m.memory_type)] for m in memories]
        self._source[slots] = [source_code(m.source) for m in memories]
        self._archived[slots] = [m.archived for m in memories]
        self._namespace[slots] = namespaces
        ids = np.array([m.id.encode() for m in memories])
        if ids.dtype.itemsize > self.ids.dtype.itemsize:
            self.ids = self.ids.astype(ids.dtype)
        self.ids[slots] = ids
        self._model[slots] = models

    def forget(self, slot: int, old: Memory) -> None:
        """Drop what ``slot`` held for ``old`` outside the columns (its tags)."""
        for tag in old.tags:
            holders = self._tag_slots.get(tag)
            if holders is not None:
                holders.discard(slot)
                if not holders:
                    del self._tag_slots[tag]

    def nbytes(self) -> int:
        columns: tuple[npt.NDArray[Any], ...] = (
            self.alive,
            self.created,
            self._expires,
            self._security,
            self._type,
            self._source,
            self._archived,
            self._namespace,
            self.ids,
            self._model,
        )
        return sum(c.nbytes for c in columns)

    def mask(self, flt: MemoryFilter, n: int) -> Mask:
        """Slots [0, n) that are alive and satisfy ``flt`` (the stores' semantics)."""
        mask = self.alive[:n].copy()
        if flt.namespace is not None:
            code = self._namespace_code.get(flt.namespace)
            if code is None:
                return np.zeros(n, dtype=bool)
            mask &= self._namespace[:n] == code
        if flt.embedding_model is not None:
            code = self._model_code.get(flt.embedding_model)
            if code is None:
                return np.zeros(n, dtype=bool)
            mask &= self._model[:n] == code
        if flt.exclude_embedding_model is not None:
            code = self._model_code.get(flt.exclude_embedding_model)
            if code is not None:
                mask &= self._model[:n] != code
        if flt.tags:
            mask &= self._tag_mask(flt.tags, flt.tag_match, n)
        if flt.memory_types:
            codes = [_TYPE_CODE[MemoryType(t)] for t in flt.memory_types]
            mask &= np.isin(self._type[:n], codes)
        if flt.trust is not None:
            mask &= np.isin(self._source[:n], trust_codes(flt.trust))
        if flt.max_security_level < max(SecurityLevel):
            mask &= self._security[:n] <= int(flt.max_security_level)
        if flt.created_after is not None:
            mask &= self.created[:n] > to_micros(flt.created_after)
        if flt.created_before is not None:
            mask &= self.created[:n] < to_micros(flt.created_before)
        if not flt.include_archived:
            mask &= ~self._archived[:n]
        if flt.not_expired_at is not None:
            mask &= self._expires[:n] > to_micros(flt.not_expired_at)
        return mask

    def _tag_mask(self, tags: Iterable[str], match: TagMatch, n: int) -> Mask:
        holders = [self._tag_slots.get(t, set()) for t in tags]
        if match is TagMatch.ALL:
            chosen = set.intersection(*holders) if holders else set()
        else:
            chosen = set().union(*holders)
        out = np.zeros(n, dtype=bool)
        if chosen:
            out[np.fromiter(chosen, dtype=np.intp, count=len(chosen))] = True
        return out
