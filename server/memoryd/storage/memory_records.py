"""InMemoryRecordStore: the in-process reference implementation of RecordStore.

Documents are stored as their JSON text, exactly as the LanceDB backend stores them,
so both round-trip the same values (tuples come back as lists, and so on) and a
caller can never mutate stored state through a reference it kept or was given.
The helpers here (encoding, batch checks) are shared by every backend.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from memoryd.domain.errors import StoreError
from memoryd.domain.models import Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.storage.base import IN_PROCESS
from memoryd.storage.checks import as_utc, as_utc_or_none
from memoryd.storage.records import FIRST_PAGE, KeyPage, put_if_unchanged


def encode_doc(doc: dict[str, Any]) -> str:
    """Compact JSON text of a document. NaN and infinities are not JSON: ValueError."""
    if not isinstance(doc, dict):
        raise ValueError(f"a record document must be a JSON object, got {type(doc).__name__}")
    return json.dumps(doc, ensure_ascii=False, allow_nan=False, separators=(",", ":"))


def decode_doc(text: str) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(text)
    return doc


def check_key(key: str, where: str) -> None:
    """Keys are stored as UTF-8: lone surrogates (from surrogateescape) cannot be."""
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(f"{where} {key!r} is not valid UTF-8") from None


def unique_records(records: Sequence[Record]) -> list[Record]:
    """The last record of each (kind, key), first-seen order; one call writes each once.

    Also the place where caller bugs surface (records are built by services): a key
    that is not UTF-8 or a document that is not JSON raises ValueError.
    """
    by_key: dict[tuple[RecordKind, str], Record] = {}
    for i, r in enumerate(records):
        check_key(r.key, f"records[{i}].key")
        RecordKind(r.kind)
        by_key.pop((r.kind, r.key), None)
        by_key[(r.kind, r.key)] = r
    return list(by_key.values())


def stored_record(r: Record) -> Record:
    """``r`` as a store keeps it: the document through JSON (a copy the caller can no
    longer reach; tuples become lists; NaN raises ValueError), instants in UTC."""
    return Record(
        kind=RecordKind(r.kind),
        key=r.key,
        doc=decode_doc(encode_doc(r.doc)),
        version=int(r.version),
        updated_at=as_utc(r.updated_at),
        expires_at=as_utc_or_none(r.expires_at),
        write_id=r.write_id,
        lineage=r.lineage,
    )


def copied_record(r: Record) -> Record:
    """A copy of a stored record for a caller (who may change its document)."""
    return dataclasses.replace(r, doc=copy.deepcopy(r.doc))


def prefix_upper_bound(prefix: str) -> str | None:
    """The smallest string greater than every string starting with ``prefix`` (None
    when there is none: the prefix is empty or all U+10FFFF). Code-point order is the
    byte order of UTF-8, so this bound is valid for both."""
    chars = list(prefix)
    while chars and chars[-1] == "\U0010ffff":
        chars.pop()
    if not chars:
        return None
    last = ord(chars[-1]) + 1
    if 0xD800 <= last <= 0xDFFF:  # surrogates are not characters: skip the range
        last = 0xE000
    chars[-1] = chr(last)
    return "".join(chars)


@dataclass(slots=True)
class _Stored:
    kind: RecordKind
    key: str
    doc: str
    version: int
    updated_at: datetime
    expires_at: datetime | None

    def out(self) -> Record:
        return Record(
            kind=self.kind,
            key=self.key,
            doc=decode_doc(self.doc),
            version=self.version,
            updated_at=self.updated_at,
            expires_at=self.expires_at,
        )


class InMemoryRecordStore:
    """A RecordStore kept in process memory; state is lost on close."""

    name = "memory"
    capabilities = IN_PROCESS

    def __init__(self) -> None:
        self._data: dict[Partition, dict[RecordKind, dict[str, _Stored]]] | None = None
        self._conditional = asyncio.Lock()

    async def open(self) -> None:
        if self._data is None:
            self._data = {}

    async def close(self) -> None:
        self._data = None

    def _kind(self, partition: Partition, kind: RecordKind) -> dict[str, _Stored]:
        if self._data is None:
            raise StoreError("memory record store is not open")
        return self._data.get(partition, {}).get(RecordKind(kind), {})

    async def put_records(self, partition: Partition, records: Sequence[Record]) -> None:
        if self._data is None:
            raise StoreError("memory record store is not open")
        # Encode everything before touching state: one bad record stores nothing.
        rows = [
            _Stored(
                kind=RecordKind(r.kind),
                key=r.key,
                doc=encode_doc(r.doc),
                version=int(r.version),
                updated_at=as_utc(r.updated_at),
                expires_at=as_utc_or_none(r.expires_at),
            )
            for r in unique_records(records)
        ]
        kinds = self._data.setdefault(partition, {})
        for row in rows:
            kinds.setdefault(row.kind, {})[row.key] = row

    async def get_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[Record]:
        rows = self._kind(partition, kind)
        return [rows[k].out() for k in dict.fromkeys(keys) if k in rows]

    async def list_records(
        self, partition: Partition, kind: RecordKind, page: KeyPage = FIRST_PAGE
    ) -> list[Record]:
        if page.limit <= 0:
            return []
        rows = self._kind(partition, kind)
        keys = sorted(k for k in rows if page.admits(k))
        return [rows[k].out() for k in keys[: page.limit]]

    async def delete_records(
        self, partition: Partition, kind: RecordKind, keys: Sequence[str]
    ) -> list[str]:
        rows = self._kind(partition, kind)
        return [k for k in dict.fromkeys(keys) if rows.pop(k, None) is not None]

    async def count_records(self, partition: Partition, kind: RecordKind) -> int:
        return len(self._kind(partition, kind))

    async def put_record_if(
        self, partition: Partition, record: Record, expected: Record | None
    ) -> bool:
        return await put_if_unchanged(self, self._conditional, partition, record, expected)

    async def list_partitions(self, tenant_id: str | None = None) -> list[Partition]:
        if self._data is None:
            raise StoreError("memory record store is not open")
        return sorted(
            (
                p
                for p, kinds in self._data.items()
                if any(kinds.values()) and tenant_id in (None, p.tenant_id)
            ),
            key=lambda p: (p.tenant_id, p.agent_id),
        )
