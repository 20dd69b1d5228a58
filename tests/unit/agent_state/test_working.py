"""Working memory: merge/replace, versions, TTL on an injected clock, JSON Schema."""

from __future__ import annotations

import asyncio
from datetime import timedelta
from typing import Any

import pytest

from memoryd.domain.agent_state import (
    WorkingMemoryMode,
    WorkingMemoryWrite,
    WorkingScope,
    WorkingScopeQuery,
)
from memoryd.domain.errors import InvalidArgument, NotFound
from memoryd.domain.json_text import Json
from memoryd.domain.records import Record, RecordKind
from memoryd.service.agent_state.working import WorkingMemoryService
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.unit.agent_state.conftest import T0, FakeClock
from tests.unit.service.helpers import scope_for

A = scope_for("agent-a")
B = scope_for("agent-b")
T1 = WorkingScope("thread-1", "")
PLAN_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "goal": {"type": "string"},
        "steps": {"type": "array", "items": {"type": "string"}},
        "done": {"type": "integer", "minimum": 0},
    },
    "required": ["goal"],
}


def write(content: dict[str, Any], scope: WorkingScope = T1, **kw: Any) -> WorkingMemoryWrite:
    return WorkingMemoryWrite(scope=scope, content=Json.of(content), **_schema(kw))


def _schema(kw: dict[str, Any]) -> dict[str, Any]:
    """``json_schema`` as the adapters pass it on (a Json)."""
    if kw.get("json_schema") is not None:
        kw["json_schema"] = Json.of(kw["json_schema"])
    return kw


def fields_of(err: pytest.ExceptionInfo[InvalidArgument]) -> dict[str, str]:
    return {v.field: v.description for v in err.value.violations}


async def test_merge_is_the_default_and_replace_replaces(working: WorkingMemoryService) -> None:
    first = await working.set(A, write({"goal": "book dentist", "steps": ["call"]}))
    assert first.version == 1 and first.content == {"goal": "book dentist", "steps": ["call"]}
    merged = await working.set(A, write({"steps": ["call", "confirm"], "n": None}))
    assert merged.version == 2
    assert merged.content == {"goal": "book dentist", "steps": ["call", "confirm"], "n": None}
    replaced = await working.set(A, write({"only": 1}, mode=WorkingMemoryMode.REPLACE))
    assert replaced.version == 3 and replaced.content == {"only": 1}
    got = await working.get(A, T1)
    assert got.content == {"only": 1} and got.version == 3 and got.updated_at == replaced.updated_at
    # An empty merge is a touch: same content, next version.
    assert (await working.set(A, write({}))).version == 4


async def test_scopes_are_independent_and_partitioned(working: WorkingMemoryService) -> None:
    both = WorkingScope("thread-1", "doc-9")
    resource_only = WorkingScope("", "doc-9")
    await working.set(A, write({"x": 1}))
    await working.set(A, write({"x": 2}, scope=both))
    await working.set(A, write({"x": 3}, scope=resource_only))
    assert [(await working.get(A, s)).content["x"] for s in (T1, both, resource_only)] == [1, 2, 3]
    with pytest.raises(NotFound):
        await working.get(B, T1)  # another agent's partition
    assert not await working.delete(B, T1)
    assert (await working.get(A, T1)).content == {"x": 1}


async def test_delete_reports_whether_it_existed(working: WorkingMemoryService) -> None:
    await working.set(A, write({"x": 1}))
    assert await working.delete(A, T1) is True
    assert await working.delete(A, T1) is False
    with pytest.raises(NotFound):
        await working.get(A, T1)
    # Deleted means gone: a new write starts over.
    again = await working.set(A, write({"y": 2}))
    assert again.version == 1 and again.content == {"y": 2}


async def test_ttl_counts_from_the_last_update(
    working: WorkingMemoryService, clock: FakeClock
) -> None:
    first = await working.set(A, write({"x": 1}, ttl=timedelta(minutes=10)))
    assert first.expires_at == clock.now + timedelta(minutes=10)
    clock.advance(minutes=9)
    refreshed = await working.set(A, write({"y": 2}))  # TTL kept, restarted
    assert refreshed.ttl == timedelta(minutes=10)
    assert refreshed.expires_at == clock.now + timedelta(minutes=10)
    clock.advance(minutes=9)
    assert (await working.get(A, T1)).content == {"x": 1, "y": 2}
    clock.advance(minutes=1)  # exactly at expires_at: expired
    with pytest.raises(NotFound):
        await working.get(A, T1)
    assert (await working.list_scopes(A, WorkingScopeQuery())).items == []
    assert await working.delete(A, T1) is False  # expired reads as absent
    # A write after expiry starts afresh: no old content, version 1.
    fresh = await working.set(A, write({"z": 3}))
    assert fresh.version == 1 and fresh.content == {"z": 3} and fresh.expires_at is None


async def test_zero_ttl_removes_expiry_and_negative_is_rejected(
    working: WorkingMemoryService, clock: FakeClock
) -> None:
    await working.set(A, write({"x": 1}, ttl=timedelta(seconds=30)))
    cleared = await working.set(A, write({}, ttl=timedelta(0)))
    assert cleared.expires_at is None and cleared.ttl is None
    clock.advance(days=400)
    assert (await working.get(A, T1)).content == {"x": 1}
    with pytest.raises(InvalidArgument) as err:
        await working.set(A, write({}, ttl=timedelta(seconds=-1)))
    assert "ttl" in fields_of(err)


async def test_purge_expired_deletes_only_expired(
    working: WorkingMemoryService, clock: FakeClock
) -> None:
    await working.set(A, write({"x": 1}, ttl=timedelta(seconds=5)))
    await working.set(A, write({"x": 2}, scope=WorkingScope("t2"), ttl=timedelta(hours=1)))
    await working.set(A, write({"x": 3}, scope=WorkingScope("t3")))
    await working.set(B, write({"x": 4}, ttl=timedelta(seconds=5)))
    clock.advance(seconds=10)
    assert await working.purge_expired(A.partition) == 1
    assert await working.purge_expired(A.partition) == 0
    listed = await working.list_scopes(A, WorkingScopeQuery())
    assert sorted(w.scope.thread_id for w in listed.items) == ["t2", "t3"]
    assert await working.purge_expired(B.partition) == 1


async def test_schema_is_kept_for_later_writes_and_violations_name_json_paths(
    working: WorkingMemoryService,
) -> None:
    await working.set(A, write({"goal": "g", "steps": ["a"]}, json_schema=PLAN_SCHEMA))
    with pytest.raises(InvalidArgument) as err:
        await working.set(A, write({"steps": ["a", "b", 3, 4], "done": -1}))
    assert fields_of(err).keys() == {"content.$.done", "content.$.steps[2]", "content.$.steps[3]"}
    assert "is not of type 'string'" in fields_of(err)["content.$.steps[2]"]
    # Nothing was stored by the rejected write.
    got = await working.get(A, T1)
    assert got.version == 1 and got.json_schema == PLAN_SCHEMA
    # REPLACE without the required field violates at the root.
    with pytest.raises(InvalidArgument) as err:
        await working.set(A, write({"steps": []}, mode=WorkingMemoryMode.REPLACE))
    assert "'goal' is a required property" in fields_of(err)["content.$"]


async def test_list_order_of_violations_follows_the_document(
    working: WorkingMemoryService,
) -> None:
    schema = {"type": "object", "properties": {"s": {"type": "array", "items": {"type": "string"}}}}
    with pytest.raises(InvalidArgument) as err:
        await working.set(A, write({"s": [0] * 12}, json_schema=schema))
    paths = [v.field for v in err.value.violations]
    assert paths == [f"content.$.s[{i}]" for i in range(10)]  # first 10, by index


async def test_new_schema_replaces_and_empty_schema_removes(working: WorkingMemoryService) -> None:
    await working.set(A, write({"goal": "g"}, json_schema=PLAN_SCHEMA))
    with pytest.raises(InvalidArgument) as err:
        # The new schema applies to the merged object, which still holds "goal": "g".
        await working.set(A, write({}, json_schema={"properties": {"goal": {"type": "integer"}}}))
    assert "content.$.goal" in fields_of(err)
    numbers = {"type": "object", "additionalProperties": {"type": "number"}}
    replaced = await working.set(A, write({"goal": 1}, json_schema=numbers))
    assert replaced.json_schema == numbers
    with pytest.raises(InvalidArgument):
        await working.set(A, write({"x": "text"}))
    removed = await working.set(A, write({"x": "text"}, json_schema={}))
    assert removed.json_schema is None and removed.content == {"goal": 1, "x": "text"}


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "no-such-type"},
        {"properties": {"a": {"minimum": "ten"}}},
        {"pattern": "(unclosed"},
    ],
)
async def test_invalid_schema_is_rejected_on_json_schema(
    working: WorkingMemoryService, schema: dict[str, Any]
) -> None:
    with pytest.raises(InvalidArgument) as err:
        await working.set(A, write({"x": 1}, json_schema=schema))
    # "json_schema", or the path of the bad pattern inside it.
    assert [f.split(".")[0] for f in fields_of(err)] == ["json_schema"]
    with pytest.raises(NotFound):
        await working.get(A, T1)


async def test_remote_references_are_never_fetched(working: WorkingMemoryService) -> None:
    # A listener the schema points at: jsonschema's default would GET it (blocking).
    connected: list[bool] = []

    async def note(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        connected.append(True)
        writer.close()

    server = await asyncio.start_server(note, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    schema = {"$ref": f"http://127.0.0.1:{port}/schema.json"}
    try:
        with pytest.raises(InvalidArgument) as err:
            await working.set(A, write({"x": 1}, json_schema=schema))
    finally:
        server.close()
        await server.wait_closed()
    assert "cannot be resolved" in fields_of(err)["json_schema"]
    assert connected == []


async def test_schema_draft_from_dollar_schema(working: WorkingMemoryService) -> None:
    # Draft 4's exclusiveMaximum is a boolean; Draft 2020-12 would reject this schema.
    draft4 = {
        "$schema": "http://json-schema.org/draft-04/schema#",
        "properties": {"n": {"maximum": 5, "exclusiveMaximum": True}},
    }
    await working.set(A, write({"n": 4}, json_schema=draft4))
    with pytest.raises(InvalidArgument) as err:
        await working.set(A, write({"n": 5}))
    assert "content.$.n" in fields_of(err)


async def test_content_size_limit(working: WorkingMemoryService) -> None:
    await working.set(A, write({"a": "x" * 1000}))
    with pytest.raises(InvalidArgument) as err:
        await working.set(A, write({"b": "y" * 1100}))  # the merged object is too big
    assert "working_memory.max_content_bytes" in fields_of(err)["content"]
    with pytest.raises(InvalidArgument) as err:  # refused where it enters: no write
        Json.from_value({"n": float("nan")}, "content")
    assert "content" in fields_of(err)


@pytest.mark.parametrize(
    ("scope", "field"),
    [
        (WorkingScope("", ""), "scope"),
        (WorkingScope("t" * 257, ""), "scope.thread_id"),
        (WorkingScope("", "r\x00x"), "scope.resource_id"),
        (WorkingScope("t\nx", "r"), "scope.thread_id"),
    ],
)
async def test_bad_scopes_name_the_field(
    working: WorkingMemoryService, scope: WorkingScope, field: str
) -> None:
    for call in (
        working.set(A, write({"x": 1}, scope=scope)),
        working.get(A, scope),
        working.delete(A, scope),
    ):
        with pytest.raises(InvalidArgument) as err:
            await call
        assert field in fields_of(err)


async def test_unicode_scope_ids_at_the_byte_limit(working: WorkingMemoryService) -> None:
    scope = WorkingScope("é" * 128, "线程")  # 256 bytes of UTF-8
    await working.set(A, write({"ok": True}, scope=scope))
    assert (await working.get(A, scope)).scope == scope


async def test_list_filters_and_pages(working: WorkingMemoryService) -> None:
    for t in range(3):
        for r in range(4):
            await working.set(A, write({"t": t, "r": r}, scope=WorkingScope(f"t{t}", f"r{r}")))
    await working.set(A, write({"solo": True}, scope=WorkingScope("", "r1")))

    seen: list[WorkingScope] = []
    token = ""
    while True:
        page = await working.list_scopes(A, WorkingScopeQuery(page_size=5, page_token=token))
        assert len(page.items) <= 5
        seen.extend(w.scope for w in page.items)
        token = page.next_page_token
        if not token:
            break
    assert len(seen) == 13 and len(set(seen)) == 13
    assert seen == sorted(seen, key=lambda s: s.key)

    t1 = await working.list_scopes(A, WorkingScopeQuery(thread_id="t1"))
    assert [w.scope.resource_id for w in t1.items] == ["r0", "r1", "r2", "r3"]
    r1 = await working.list_scopes(A, WorkingScopeQuery(resource_id="r1", page_size=2))
    assert [w.scope.thread_id for w in r1.items] == ["", "t0"] and r1.next_page_token
    rest = await working.list_scopes(
        A, WorkingScopeQuery(resource_id="r1", page_size=2, page_token=r1.next_page_token)
    )
    assert [w.scope.thread_id for w in rest.items] == ["t1", "t2"] and not rest.next_page_token
    both = await working.list_scopes(A, WorkingScopeQuery(thread_id="t2", resource_id="r3"))
    assert [w.content for w in both.items] == [{"t": 2, "r": 3}]
    assert (await working.list_scopes(B, WorkingScopeQuery())).items == []


async def test_page_tokens_are_bound_to_query_and_caller(working: WorkingMemoryService) -> None:
    for t in range(3):
        await working.set(A, write({}, scope=WorkingScope(f"t{t}")))
    page = await working.list_scopes(A, WorkingScopeQuery(page_size=1))
    for caller, query in (
        (B, WorkingScopeQuery(page_size=1, page_token=page.next_page_token)),
        (A, WorkingScopeQuery(page_size=1, thread_id="t1", page_token=page.next_page_token)),
        (A, WorkingScopeQuery(page_token="garbage")),
    ):
        with pytest.raises(InvalidArgument) as err:
            await working.list_scopes(caller, query)
        assert list(fields_of(err)) == ["page_token"]
    with pytest.raises(InvalidArgument) as err:
        await working.list_scopes(A, WorkingScopeQuery(page_size=100_000, thread_id="\x01"))
    assert fields_of(err).keys() == {"page_size", "thread_id"}


def texted(text: str, scope: WorkingScope = T1, **kw: Any) -> WorkingMemoryWrite:
    """A write whose content came as JSON text (as the API passes it on)."""
    return WorkingMemoryWrite(scope=scope, content=Json.parse(text), **_schema(kw))


async def test_content_is_kept_as_written_and_a_merge_keeps_each_members_text(
    working: WorkingMemoryService,
) -> None:
    first = await working.set(
        A, texted('{"price": 1.50, "e": 1e2, "id": 12345678901234567, "z": -0, "n": {"a": 1.0}}')
    )
    assert (
        first.content_json == '{"price":1.50,"e":1e2,"id":12345678901234567,"z":-0,"n":{"a":1.0}}'
    )
    merged = await working.set(A, texted('{"e": 2.50, "new": [1E-7]}'))
    assert merged.content_json == (
        '{"price":1.50,"e":2.50,"id":12345678901234567,"z":-0,"n":{"a":1.0},"new":[1E-7]}'
    )
    assert merged.content == {
        "price": 1.5,
        "e": 2.5,
        "id": 12345678901234567,
        "z": 0,
        "n": {"a": 1.0},
        "new": [1e-7],
    }
    assert (await working.get(A, T1)).content_json == merged.content_json
    listed = await working.list_scopes(A, WorkingScopeQuery())
    assert [wm.content_json for wm in listed.items] == [merged.content_json]
    replaced = await working.set(A, texted('{"only": 1.50}', mode=WorkingMemoryMode.REPLACE))
    assert replaced.content_json == '{"only":1.50}'


async def test_a_schema_checks_the_value_of_the_text(working: WorkingMemoryService) -> None:
    schema = {"type": "object", "properties": {"price": {"type": "number", "maximum": 2}}}
    await working.set(A, texted('{"price": 1.50}', json_schema=schema))
    with pytest.raises(InvalidArgument) as err:
        await working.set(A, texted('{"price": 2.50}'))
    assert list(fields_of(err)) == ["content.$.price"]
    assert (await working.get(A, T1)).content_json == '{"price":1.50}'


async def test_a_record_stored_before_the_text_was_kept_reads_and_merges(
    working: WorkingMemoryService, records: InMemoryRecordStore
) -> None:
    old = Record(RecordKind.WORKING, T1.key, {"content": {"step": 2}}, 1, T0)
    await records.put_records(A.partition, [old])
    assert (await working.get(A, T1)).content_json == '{"step":2}'
    merged = await working.set(A, texted('{"price": 1.50}'))
    assert merged.content_json == '{"step":2,"price":1.50}' and merged.version == 2
