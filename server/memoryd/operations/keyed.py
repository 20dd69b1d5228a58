"""Keyed memory operations: set, get, list (like ``ls``) and history of a key."""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.domain import keyed
from memoryd.domain.as_of import AsOf
from memoryd.observability.tracing import SEARCH, UPSERT
from memoryd.operations.definition import Effect, Operation, now_or_as_of
from memoryd.service.snapshot.as_of import AsOfReads


@dataclass(frozen=True, slots=True)
class KeyRef:
    """The input of GetKey: the key path, and the moment to read it as of (None: now)."""

    key: str
    as_of: AsOf | None = None


def _entry(entry: keyed.KeyEntry) -> tuple[tuple[str, ...], str]:
    return ((entry.memory_id,) if entry.memory_id else (), entry.key)


SET_MEMORY: Operation[keyed.KeyWrite, keyed.KeyEntry] = Operation(
    name="MemoryService.SetMemory",
    effect=Effect.WRITE,
    genai=UPSERT,
    run=lambda s, scope, write: s.keyed.set(scope, write),
    touched_in=lambda w: ((), w.key),
    touched_out=_entry,
    audit_in_log=True,
)
GET_KEY: Operation[KeyRef, keyed.KeyEntry] = Operation(
    name="MemoryService.GetKey",
    effect=Effect.READ,
    genai=SEARCH,
    run=now_or_as_of(
        lambda s, scope, ref: s.keyed.get(scope, ref.key),
        lambda reads, scope, ref, moment: reads.get_key(scope, ref.key, moment),
    ),
    touched_in=lambda ref: ((), ref.key),
)
LIST_KEYS: Operation[keyed.KeyListQuery, keyed.KeyListing] = Operation(
    name="MemoryService.ListKeys",
    effect=Effect.READ,
    genai=SEARCH,
    run=now_or_as_of(lambda s, scope, query: s.keyed.list(scope, query), AsOfReads.list_keys),
    count=lambda _, listing: len(listing.entries),
)
KEY_HISTORY: Operation[keyed.KeyHistoryQuery, keyed.KeyHistoryPage] = Operation(
    name="MemoryService.KeyHistory",
    effect=Effect.READ,
    genai=SEARCH,
    run=lambda s, scope, query: s.keyed.history(scope, query),
    touched_in=lambda q: ((), q.key),
    count=lambda _, page: len(page.entries),
)

OPERATIONS = (SET_MEMORY, GET_KEY, LIST_KEYS, KEY_HISTORY)
