"""Keyed memory operations: set, get, list (like ``ls``) and history of a key."""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.domain.keyed import (
    KeyEntry,
    KeyHistoryPage,
    KeyHistoryQuery,
    KeyListing,
    KeyListQuery,
    KeyWrite,
)
from memoryd.domain.principal import CallScope
from memoryd.observability.tracing import SEARCH, UPSERT
from memoryd.operations.definition import Effect, Operation
from memoryd.operations.services import Services


@dataclass(frozen=True, slots=True)
class KeyRef:
    """The input of GetKey: the key path."""

    key: str


async def _set(s: Services, scope: CallScope, write: KeyWrite) -> KeyEntry:
    return await s.keyed.set(scope, write)


async def _get(s: Services, scope: CallScope, ref: KeyRef) -> KeyEntry:
    return await s.keyed.get(scope, ref.key)


async def _list(s: Services, scope: CallScope, query: KeyListQuery) -> KeyListing:
    return await s.keyed.list(scope, query)


async def _history(s: Services, scope: CallScope, query: KeyHistoryQuery) -> KeyHistoryPage:
    return await s.keyed.history(scope, query)


def _entry(entry: KeyEntry) -> tuple[tuple[str, ...], str]:
    return ((entry.memory_id,) if entry.memory_id else (), entry.key)


SET_MEMORY: Operation[KeyWrite, KeyEntry] = Operation(
    name="MemoryService.SetMemory",
    effect=Effect.WRITE,
    genai=UPSERT,
    run=_set,
    touched_in=lambda w: ((), w.key),
    touched_out=_entry,
    audit_in_log=True,
)
GET_KEY: Operation[KeyRef, KeyEntry] = Operation(
    name="MemoryService.GetKey",
    effect=Effect.READ,
    genai=SEARCH,
    run=_get,
    touched_in=lambda ref: ((), ref.key),
)
LIST_KEYS: Operation[KeyListQuery, KeyListing] = Operation(
    name="MemoryService.ListKeys",
    effect=Effect.READ,
    genai=SEARCH,
    run=_list,
    count=lambda _, listing: len(listing.entries),
)
KEY_HISTORY: Operation[KeyHistoryQuery, KeyHistoryPage] = Operation(
    name="MemoryService.KeyHistory",
    effect=Effect.READ,
    genai=SEARCH,
    run=_history,
    touched_in=lambda q: ((), q.key),
    count=lambda _, page: len(page.entries),
)

OPERATIONS = (SET_MEMORY, GET_KEY, LIST_KEYS, KEY_HISTORY)
