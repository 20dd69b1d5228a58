"""Working memory: a JSON object of task state per scope (thread_id, resource_id).

Writes merge top-level fields (MERGE, the default) or replace the object (REPLACE).
The content is stored as the writers' JSON text (``content_json``): a MERGE joins the
stored members' text and the new members' text as written, so ``1.50`` or ``1e2``
reads back as written; a JSON Schema checks the parsed value.
A TTL and a JSON Schema, once given, are kept for later writes of the scope; a new one
replaces them (a zero TTL removes the expiry, an empty schema ``{}`` removes the
schema). The TTL counts from the last write; an expired scope reads as absent (NOT_FOUND,
left out of listings, and a write starts it afresh at version 1) until
:meth:`WorkingMemoryService.purge_expired` deletes it.

A merge reads the scope and writes it back (service/common/record_writes.py): under a lock in
this process, and conditional on the scope being unchanged where replicas share the
store, so no merge is lost. There a delete expires the scope rather than removing it
(the conditional writes of racing merges need the record to compare with).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

from memoryd.config import LimitsSettings, WorkingMemorySettings
from memoryd.domain import json_text
from memoryd.domain.agent_state import (
    WorkingMemory,
    WorkingMemoryMode,
    WorkingMemoryWrite,
    WorkingScope,
    WorkingScopePage,
    WorkingScopeQuery,
)
from memoryd.domain.errors import FieldViolation, InvalidArgument, NotFound
from memoryd.domain.json_text import Json
from memoryd.domain.limits import MAX_TTL, next_version
from memoryd.domain.models import PageCursor, Partition
from memoryd.domain.principal import CallScope
from memoryd.domain.records import Record, RecordKind, UndecodableRecord, stored_json
from memoryd.service.agent_state import schemas as json_schemas
from memoryd.service.agent_state.schema_runner import SchemaRunner
from memoryd.service.agent_state.schema_work import Job
from memoryd.service.common import validation as check
from memoryd.service.common.pagination import PageTokenCodec, fingerprint
from memoryd.service.common.record_writes import RecordService
from memoryd.service.common.scanning import expired_keys
from memoryd.service.common.undecodable import decodable
from memoryd.service.common.validation import Violations
from memoryd.storage.records import KeyPage, RecordStore

DEFAULT_PAGE_SIZE = 50
#: Records read per store call while scanning.
SCAN_BATCH = 200

Clock = Callable[[], datetime]


def check_identifier(v: Violations, value: str, field: str, max_bytes: int) -> None:
    """An id used inside a record key: bounded, no control characters (so no NUL)."""
    if len(value.encode()) > max_bytes:
        v.add(field, f"longer than {max_bytes} bytes")
    if check.has_control_chars(value):
        v.add(field, "must not contain control characters")


def compact_json_size(value: Any) -> int | None:
    """Bytes of the compact JSON text; None when the value is not JSON (NaN, ...)."""
    try:
        text = json.dumps(value, allow_nan=False, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return len(text.encode())


def checked_schema(
    v: Violations, schema: dict[str, Any], settings: WorkingMemorySettings, field: str
) -> bool:
    """The cheap checks of a schema (size, depth), done on the caller's thread; True
    when the full check (cycles, patterns on RE2, the meta-schema) may follow."""
    shape = json_schemas.shape_problems(schema, field)  # first: the rest recurses
    if shape:
        v.extend(FieldViolation(f, d) for f, d in shape)
        return False
    size = compact_json_size(schema)
    if size is None:
        v.add(field, "is not valid JSON")
        return False
    if size > settings.max_schema_bytes:
        v.add(
            field,
            f"is {size} bytes as JSON; the limit is {settings.max_schema_bytes} "
            "(working_memory.max_schema_bytes)",
        )
        return False
    return True


def _what(record: Record) -> str:
    scope = WorkingScope.from_key(record.key)
    return f"working memory of thread_id {scope.thread_id!r}, resource_id {scope.resource_id!r}"


def working_content(record: Record) -> tuple[dict[str, Any], str]:
    """The content of a WORKING record and its stored JSON text; UndecodableRecord
    (DATA_LOSS) when the text no longer decodes."""
    text = record.doc.get("content_json")
    if not isinstance(text, str):  # written before the text was kept
        try:
            text = json_text.dumps(record.doc.get("content", {}))
        except (TypeError, ValueError) as exc:
            raise UndecodableRecord(_what(record), f"not JSON: {exc}") from None
    content = stored_json(text, _what(record))
    if not isinstance(content.value, dict):
        raise UndecodableRecord(_what(record), "not a JSON object")
    return content.value, content.text


def working_doc(
    content_json: str, json_schema: dict[str, Any] | None, ttl_s: float | None
) -> dict[str, Any]:
    """The document of a WORKING record: the content as its JSON text only, so the
    text is the one source of what the content is."""
    return {"content_json": content_json, "json_schema": json_schema, "ttl_s": ttl_s}


async def purge_expired_records(
    records: RecordStore, partition: Partition, kind: RecordKind, now: datetime
) -> int:
    """Delete the records of ``kind`` that expired at or before ``now``; returns how many."""
    expired = await expired_keys(records, partition, kind, now, SCAN_BATCH)
    if not expired:
        return 0
    return len(await records.delete_records(partition, kind, expired))


@dataclasses.dataclass(eq=False, kw_only=True)
class WorkingMemoryService(RecordService):
    """Working memory: scoped JSON documents, merged and checked against their schemas."""

    page_tokens: PageTokenCodec
    settings: WorkingMemorySettings
    limits: LimitsSettings
    #: Where JSON schemas are checked (None: a runner of its own).
    schemas: SchemaRunner | None = None

    def __post_init__(self) -> None:
        self._schemas = self.schemas or SchemaRunner(self.settings)

    async def check_schema(self, scope: CallScope, schema: dict[str, Any], v: Violations) -> None:
        """Add the violations of a schema given for a scope, checked as ``set`` checks a
        new one: in the schema runner, charged to the caller's tenant."""
        if checked_schema(v, schema, self.settings, "json_schema"):
            found = await self._schemas.run(scope.partition.tenant_id, Job(schema, check=True))
            for field, description in found:
                v.add(field, description)

    def reader(self, records: RecordStore, clock: Clock) -> WorkingMemoryService:
        """This service over ``records`` with ``clock`` (an as-of read's state then),
        sharing its schema runner."""
        return dataclasses.replace(self, records=records, clock=clock, schemas=self._schemas)

    def stop_schema_work(self) -> None:
        """At the start of a shutdown: schema checks waiting or running answer
        UNAVAILABLE at once, so no in-flight write holds the shutdown up."""
        self._schemas.close()

    # ------------------------------------------------------------------ writes

    async def set(self, scope: CallScope, write: WorkingMemoryWrite) -> WorkingMemory:
        v = Violations()
        self._check_scope(v, write.scope)
        if write.ttl is not None and not timedelta(0) <= write.ttl <= MAX_TTL:
            v.add("ttl", f"must be between 0 and {MAX_TTL.days} days")
        # {} removes the schema; any other is kept for the scope's later writes.
        new_schema = _schema_of(write)
        if new_schema is not None:
            checked_schema(v, new_schema, self.settings, "json_schema")
        v.raise_if_any()

        key = write.scope.key

        async def attempt() -> Record:
            now = self.clock()
            found = await self.records.get_records(scope.partition, RecordKind.WORKING, [key])
            current = found[0] if found and not found[0].expired(now) else None
            return await self._merged(scope, write, current, now, found[0] if found else None)

        record = await self._writes.run((scope.partition, key), attempt)
        return working_memory_from(record)

    async def _merged(
        self,
        scope: CallScope,
        write: WorkingMemoryWrite,
        current: Record | None,
        now: datetime,
        stored_record: Record | None,
    ) -> Record:
        """The scope's next state from ``current`` (None: absent or expired), written
        over what was read (``stored_record``)."""
        stored = current.doc if current is not None else {}
        new_schema = _schema_of(write)
        content, text = dict(write.content.members), write.content.text
        if write.mode is WorkingMemoryMode.MERGE and current is not None:
            stored_content, stored_text = working_content(current)
            content = {**stored_content, **content}
            text = json_text.merge_objects(stored_text, text)
        schema: dict[str, Any] | None = stored.get("json_schema")
        if write.json_schema is not None:
            schema = new_schema
        ttl_s: float | None = stored.get("ttl_s")
        if write.ttl is not None:
            ttl_s = write.ttl.total_seconds() or None

        self._check_size(text)
        if schema is not None:
            await self._check_against(scope, content, schema, new=new_schema is not None)
        record = Record(
            kind=RecordKind.WORKING,
            key=write.scope.key,
            doc=working_doc(text, schema, ttl_s),
            version=next_version(current.version) if current is not None else 1,
            updated_at=now,
            expires_at=now + timedelta(seconds=ttl_s) if ttl_s else None,
        )
        return await self._writes.replace(scope.partition, record, stored_record)

    async def delete(self, scope: CallScope, wscope: WorkingScope) -> bool:
        """True when a live scope was deleted; an expired one is removed but reads as absent."""
        self._check_scope_only(wscope)
        partition, key = scope.partition, wscope.key

        async def attempt() -> bool:
            now = self.clock()
            found = await self.records.get_records(partition, RecordKind.WORKING, [key])
            if not found:
                return False
            if self._writes.shared:
                # Expired from now on: reads as absent, purged by maintenance.
                gone = dataclasses.replace(found[0], updated_at=now, expires_at=now)
                await self._writes.replace(partition, gone, found[0])
            else:
                await self.records.delete_records(partition, RecordKind.WORKING, [key])
            return not found[0].expired(now)

        return await self._writes.run((partition, key), attempt)

    async def purge_expired(self, partition: Partition, now: datetime | None = None) -> int:
        """Delete the partition's expired scopes (for maintenance); returns how many."""
        return await purge_expired_records(
            self.records, partition, RecordKind.WORKING, now or self.clock()
        )

    # ------------------------------------------------------------------ reads

    async def get(self, scope: CallScope, wscope: WorkingScope) -> WorkingMemory:
        self._check_scope_only(wscope)
        found = await self.records.get_records(scope.partition, RecordKind.WORKING, [wscope.key])
        if not found or found[0].expired(self.clock()):
            raise NotFound(
                f"no working memory for thread_id {wscope.thread_id!r}, "
                f"resource_id {wscope.resource_id!r}"
            )
        return working_memory_from(found[0])

    async def list_scopes(self, scope: CallScope, query: WorkingScopeQuery) -> WorkingScopePage:
        v = Violations()
        check.check_limit(v, query.page_size, self.limits.max_page_size, "page_size")
        max_bytes = self.settings.max_scope_id_bytes
        for field, value in (("thread_id", query.thread_id), ("resource_id", query.resource_id)):
            if value is not None:
                check_identifier(v, value, field, max_bytes)
        v.raise_if_any()
        page_size = query.page_size or DEFAULT_PAGE_SIZE
        query_print = fingerprint(scope, ["working_scopes", query.thread_id, query.resource_id])
        after = (
            self.page_tokens.decode(query.page_token, query_print).id if query.page_token else None
        )
        # A thread filter is a key prefix; a resource-only filter is checked per record.
        prefix = f"{query.thread_id}\x00" if query.thread_id is not None else ""
        now = self.clock()
        matches: list[Record] = []
        while len(matches) <= page_size:
            batch = await self.records.list_records(
                scope.partition,
                RecordKind.WORKING,
                KeyPage(prefix=prefix, after=after, limit=SCAN_BATCH),
            )
            for record in batch:
                if record.expired(now):
                    continue
                if (
                    query.resource_id is not None
                    and WorkingScope.from_key(record.key).resource_id != query.resource_id
                ):
                    continue
                matches.append(record)
            if len(batch) < SCAN_BATCH:
                break
            after = batch[-1].key
        page, more = matches[:page_size], len(matches) > page_size
        token = ""
        if more:
            last = page[-1]
            token = self.page_tokens.encode(PageCursor(last.updated_at, last.key), query_print)
        return WorkingScopePage(items=decodable(page, working_memory_from), next_page_token=token)

    # ------------------------------------------------------------------ checks

    def _check_scope(self, v: Violations, wscope: WorkingScope) -> None:
        if not wscope.thread_id and not wscope.resource_id:
            v.add("scope", "thread_id or resource_id must be set")
        max_bytes = self.settings.max_scope_id_bytes
        check_identifier(v, wscope.thread_id, "scope.thread_id", max_bytes)
        check_identifier(v, wscope.resource_id, "scope.resource_id", max_bytes)

    def _check_scope_only(self, wscope: WorkingScope) -> None:
        v = Violations()
        self._check_scope(v, wscope)
        v.raise_if_any()

    def _check_size(self, text: str) -> None:
        size = len(text.encode())
        if size > self.settings.max_content_bytes:
            raise InvalidArgument.field(
                "content",
                f"is {size} bytes as JSON; the limit is {self.settings.max_content_bytes} "
                "(working_memory.max_content_bytes)",
            )

    async def _check_against(
        self, scope: CallScope, content: dict[str, Any], schema: dict[str, Any], *, new: bool
    ) -> None:
        """Check the schema when it is ``new``, then the content against it: in the
        schema runner, within its budgets (see schema_runner.py)."""
        found = await self._schemas.run(scope.partition.tenant_id, Job(schema, content, new))
        if found:
            raise InvalidArgument([FieldViolation(f, d) for f, d in found])


def _schema_of(write: WorkingMemoryWrite) -> dict[str, Any] | None:
    """The write's new schema; None when it brings none or ``{}`` (which removes it)."""
    if write.json_schema is None:
        return None
    return write.json_schema.members or None


def working_memory_from(record: Record) -> WorkingMemory:
    """The working memory a WORKING record holds."""
    ttl_s = record.doc.get("ttl_s")
    content, text = working_content(record)
    schema = record.doc.get("json_schema")
    if schema is not None:
        try:
            Json.of(schema)
        except json_text.JsonTextError as exc:
            raise UndecodableRecord(_what(record) + "'s schema", str(exc)) from None
    return WorkingMemory(
        scope=WorkingScope.from_key(record.key),
        content=content,
        content_json=text,
        version=record.version,
        updated_at=record.updated_at,
        expires_at=record.expires_at,
        ttl=timedelta(seconds=ttl_s) if ttl_s else None,
        json_schema=schema,
    )
