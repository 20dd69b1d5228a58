"""Keyed memory operations: set, get, list (like ``ls``) and history of a key."""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.domain import keyed
from memoryd.observability.tracing import SEARCH, UPSERT
from memoryd.operations.definition import Effect, Operation


@dataclass(frozen=True, slots=True)
class KeyRef:
    """The input of GetKey: the key path."""

    key: str


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
    run=lambda s, scope, ref: s.keyed.get(scope, ref.key),
    touched_in=lambda ref: ((), ref.key),
)
LIST_KEYS: Operation[keyed.KeyListQuery, keyed.KeyListing] = Operation(
    name="MemoryService.ListKeys",
    effect=Effect.READ,
    genai=SEARCH,
    run=lambda s, scope, query: s.keyed.list(scope, query),
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
