"""KeyHistory's pages: a key's writes (or every key's below a directory) from their
history events, oldest first, tombstones included, at the caller's clearance."""

from __future__ import annotations

from dataclasses import dataclass

from memoryd.domain.keyed import KeyEntry, KeyHistoryPage, level_of
from memoryd.domain.principal import CallScope
from memoryd.domain.records import RecordKind
from memoryd.service.common.pagination import (
    KEY_FETCH_MAX,
    KEY_FETCH_MIN,
    PageTokenCodec,
    fingerprint,
)
from memoryd.service.keyed.docs import decoded_entry
from memoryd.storage.records import KeyPage, RecordStore


@dataclass(frozen=True, slots=True)
class HistoryPage:
    """Which page: the events' key prefix, its size and the caller's page token."""

    prefix: str
    size: int
    token: str


async def history_page(
    records: RecordStore, tokens: PageTokenCodec, scope: CallScope, page: HistoryPage
) -> KeyHistoryPage:
    """One page of the events under ``page.prefix``, by key then version."""
    query_print = fingerprint(scope, ["key_history", page.prefix])
    after: str | None = None
    if page.token:
        after = tokens.decode_key(page.token, query_print)
    entries: list[tuple[str, KeyEntry]] = []
    fetch = max(KEY_FETCH_MIN, page.size + 1)
    while len(entries) <= page.size:
        rows = await records.list_records(
            scope.partition,
            RecordKind.KEY_EVENT,
            KeyPage(prefix=page.prefix, after=after, limit=fetch),
        )
        shown = [row for row in rows if level_of(row) <= scope.clearance]
        for row, entry in zip(shown, map(decoded_entry, shown), strict=True):
            if entry is not None:
                entries.append((row.key, entry))
        if len(rows) < fetch:
            break
        after = rows[-1].key
        fetch = min(fetch * 2, KEY_FETCH_MAX)
    taken, more = entries[: page.size], len(entries) > page.size
    token = ""
    if more:
        token = tokens.encode_key(taken[-1][0], query_print)
    return KeyHistoryPage(entries=[e for _, e in taken], next_page_token=token)
