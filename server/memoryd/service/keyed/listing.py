"""ListKeys' pages: the keys (or, not recursive, the keys and directories) directly
below a prefix, in key order, at the caller's clearance; a directory once, its
subtree skipped."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from memoryd.domain.keyed import KeyEntry, KeyListing, level_of
from memoryd.domain.principal import CallScope
from memoryd.domain.records import Record, RecordKind
from memoryd.service.common.pagination import (
    KEY_FETCH_MAX,
    KEY_FETCH_MIN,
    PageTokenCodec,
    fingerprint,
)
from memoryd.service.common.undecodable import decodable
from memoryd.service.keyed.docs import entry_from, is_live
from memoryd.service.keyed.keys import child_of
from memoryd.storage.records import KeyPage, RecordStore


@dataclass(frozen=True, slots=True)
class ListingPage:
    """Which page: the prefix, whether keys below subdirectories are listed, its
    size, the caller's page token, and a string past every key of a directory."""

    prefix: str
    recursive: bool
    size: int
    token: str
    subtree_end: str


def shown(scope: CallScope, slot: Record) -> bool:
    """Tombstones and keys above the caller's clearance read as missing."""
    return is_live(slot) and level_of(slot) <= scope.clearance


async def key_listing(
    records: RecordStore, tokens: PageTokenCodec, scope: CallScope, page: ListingPage, now: datetime
) -> KeyListing:
    """One page of ``page.prefix``'s keys and directories; expired keys read as
    missing (as GetKey), until compaction removes them."""
    query_print = fingerprint(scope, ["keys", page.prefix, page.recursive])
    position = tokens.decode_key(page.token, query_print) if page.token else ""
    after = _after(position, page.subtree_end)
    # (position, entry or directory) in key order; one more than a page to know
    # whether another page follows.
    items: list[tuple[str, KeyEntry | str]] = []
    skipping: str | None = None  # a directory already listed: skip its subtree
    fetch = max(KEY_FETCH_MIN, page.size + 1)
    while len(items) <= page.size:
        wanted = KeyPage(prefix=page.prefix, after=after, limit=fetch)
        rows = await records.list_records(scope.partition, RecordKind.KEY, wanted)
        for row in rows:
            if skipping is not None and row.key.startswith(skipping):
                continue
            skipping = None
            if row.expired(now) or not shown(scope, row):
                continue
            child, is_dir = child_of(row.key, page.prefix)
            if page.recursive or not is_dir:
                items.extend(("k" + row.key, entry) for entry in decodable([row], entry_from))
            else:
                items.append(("d" + child, child))
                skipping = child
        if len(rows) < fetch:
            break
        after = rows[-1].key if skipping is None else skipping + page.subtree_end
        fetch = min(fetch * 2, KEY_FETCH_MAX)
    listed, more = items[: page.size], len(items) > page.size
    return KeyListing(
        entries=[item for _, item in listed if isinstance(item, KeyEntry)],
        directories=[item for _, item in listed if isinstance(item, str)],
        next_page_token=tokens.encode_key(listed[-1][0], query_print) if more else "",
    )


def _after(position: str, subtree_end: str) -> str | None:
    """The store's ``after`` for a page-token position ("k<key>" or "d<dir>")."""
    if not position:
        return None
    if position.startswith("d"):
        return position[1:] + subtree_end
    return position[1:]
