"""What an erasure of a subject (a text such as a name or an email address), or of the
keys under a prefix, removes from one agent. A subject: every memory whose content, metadata, tags or namespace hold it, and every
record that does, widened to what keeps a copy of it:

- a key (its slot, its whole history and its mirror memory) when any of them holds it;
- a session (its record, summarised messages, offloaded attachments and saved state)
  when any of them does: a summary may quote a message;
- working memory, a profile, a saved state: that record.

The match is case-insensitive (``casefold``), so it finds at least what a byte search
for the subject finds.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from memoryd.domain.models import Memory, Partition
from memoryd.domain.records import Record, RecordKind
from memoryd.service.common import scanning
from memoryd.service.lifecycle.bulk import DATA_KINDS, EVERYTHING, LifecycleDeps

#: Kinds whose record key starts with "<owner>\x00": the key or session they belong to.
_OWNED = {
    RecordKind.KEY_EVENT: RecordKind.KEY,
    RecordKind.SESSION_MESSAGE: RecordKind.SESSION,
    RecordKind.SESSION_ATTACHMENT: RecordKind.SESSION,
    RecordKind.STATE: RecordKind.SESSION,
}
#: Kinds erased whole with their owner (a key's history, a session's parts).
_PARTS = {
    RecordKind.KEY: (RecordKind.KEY_EVENT,),
    RecordKind.SESSION: (
        RecordKind.SESSION_MESSAGE,
        RecordKind.SESSION_ATTACHMENT,
        RecordKind.STATE,
    ),
}


@dataclass(slots=True)
class SubjectMatch:
    """What holds the subject: memory ids, and record keys by kind (widened)."""

    ids: list[str] = field(default_factory=list)
    records: dict[RecordKind, set[str]] = field(default_factory=dict)

    @property
    def keys(self) -> set[str]:
        return self.records.get(RecordKind.KEY, set())


def _holds(needle: str, texts: Iterable[str]) -> bool:
    return any(needle in t.casefold() for t in texts)


def _memory_texts(m: Memory) -> list[str]:
    return [m.content, m.namespace, *m.tags, json.dumps(m.metadata, ensure_ascii=False)]


def _owner(record: Record) -> tuple[RecordKind, str]:
    """The key or session a record belongs to (itself where it stands alone)."""
    owner = _OWNED.get(record.kind)
    if owner is None:
        return record.kind, record.key
    head, sep, _ = record.key.partition("\x00")
    # A state record of no session ("" id) stands alone.
    return (owner, head) if sep and head else (record.kind, record.key)


async def find(deps: LifecycleDeps, partition: Partition, subject: str) -> SubjectMatch:
    """Everything of the partition that holds ``subject``, widened to its owners."""
    needle = subject.casefold()
    match = SubjectMatch()
    owners: dict[RecordKind, set[str]] = {}
    all_records: dict[RecordKind, list[str]] = {}
    for kind in DATA_KINDS:
        keys = all_records.setdefault(kind, [])
        async for records in scanning.scan_records(deps.records, partition, kind, deps.batch):
            for record in records:
                keys.append(record.key)
                if _holds(needle, [json.dumps(record.doc, ensure_ascii=False), record.key]):
                    owner_kind, owner = _owner(record)
                    owners.setdefault(owner_kind, set()).add(owner)
    keyed_ids: dict[str, str] = {}
    async for page in scanning.scan(deps.store, partition, EVERYTHING):
        for m in page:
            if m.key:
                keyed_ids[m.id] = m.key
            if _holds(needle, _memory_texts(m)):
                if m.key:
                    owners.setdefault(RecordKind.KEY, set()).add(m.key)
                else:
                    match.ids.append(m.id)
    for kind, found in owners.items():
        match.records.setdefault(kind, set()).update(found)
        for part in _PARTS.get(kind, ()):
            prefixes = tuple(f"{o}\x00" for o in found)
            parts = {k for k in all_records.get(part, []) if k.startswith(prefixes)}
            match.records.setdefault(part, set()).update(parts)
    # A key's mirror memory goes with its key.
    match.ids.extend(i for i, key in keyed_ids.items() if key in match.keys)
    return match


async def keys_under(deps: LifecycleDeps, partition: Partition, prefix: str) -> SubjectMatch:
    """Every key of the partition under the directory ``prefix`` (normalised, ending
    in "/"), tombstones included, with its whole history and its mirror memories."""
    match = SubjectMatch()
    for kind in (RecordKind.KEY, RecordKind.KEY_EVENT):
        found = match.records.setdefault(kind, set())
        pages = scanning.scan_records(deps.records, partition, kind, deps.batch, prefix)
        async for records in pages:
            found.update(r.key for r in records)
    async for page in scanning.scan(deps.store, partition, EVERYTHING):
        match.ids.extend(m.id for m in page if m.key.startswith(prefix))
    return match
