"""Populating a partition with every record kind, and reading all of it back."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import numpy as np

from memoryd.domain.agent_state import (
    FixedZoneKind,
    LongTermMemoryMode,
    MessageDraft,
    MessageRole,
    SessionCompression,
    ToolCall,
    WorkingMemoryWrite,
    WorkingScope,
)
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyWrite
from memoryd.domain.models import (
    Memory,
    MemoryFilter,
    MemoryOrder,
    MemoryType,
    Partition,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
)
from memoryd.domain.principal import CallScope
from memoryd.domain.records import Record, RecordKind
from memoryd.domain.requests import MemoryDraft, MemoryPatch
from memoryd.domain.snapshot import StateWrite
from memoryd.storage.base import ListPage
from memoryd.storage.records import KeyPage
from tests.unit.snapshot.world import World

USER_SOURCE = Provenance(ProvenanceKind.USER)

EVERYTHING = MemoryFilter(include_archived=True)


async def populate_everything(w: World, scope: CallScope) -> None:
    """Memories (every field used), keys with history and a tombstone, working
    memory, a profile, sessions (one summarised, one closed) and saved states."""
    now = w.clock()
    m = w.memories
    await m.remember_batch(
        scope,
        [
            MemoryDraft(
                content="The user prefers dark blue slides.",
                memory_type=MemoryType.PREFERENCE,
                tags=("ui", "slides"),
                importance=0.8,
                confidence=0.7,
                namespace="user-1",
                metadata={"n": 3, "nested": {"list": [1, "two", None, True]}, "f": 1.5},
                source=Provenance(
                    ProvenanceKind.WEB, "wiki", now - timedelta(days=1), "https://example.org/x"
                ),
            ),
            MemoryDraft(
                content="Secret launch date is in May.", security_level=SecurityLevel.RESTRICTED
            ),
            MemoryDraft(content="Temporary note that expires.", expires_at=now + timedelta(days=1)),
            MemoryDraft(content="牙医预约在星期一上午十点。", tags=("中文",)),
            MemoryDraft(
                content="An old episode.",
                memory_type=MemoryType.EPISODE,
                created_at=now - timedelta(days=40),
            ),
        ],
    )
    archived = await m.remember(scope, MemoryDraft(content="An archived memory."))
    await m.update(
        scope,
        archived.memory.id,
        MemoryPatch(fields=frozenset({"archived"}), values={"archived": True}),
    )
    got = await m.get(scope, archived.memory.id)  # an access to flush
    assert got.archived
    await w.access.flush()

    k = w.keyed
    await k.set(
        scope,
        KeyWrite(
            "/user/style",
            Json.of({"summary": "short answers", "type": "preference"}),
            source=USER_SOURCE,
        ),
    )
    await k.set(
        scope,
        KeyWrite(
            "/user/style", Json.of({"summary": "code first", "importance": 0.9}), source=USER_SOURCE
        ),
    )
    await k.set(scope, KeyWrite("/user/old", Json.of("to be deleted"), source=USER_SOURCE))
    await k.set(scope, KeyWrite("/user/old", Json.of(None), source=USER_SOURCE))
    await k.set(
        scope,
        KeyWrite(
            "/kb/doc",
            Json.of({"text": "facts"}),
            source=Provenance(ProvenanceKind.FILE, "doc", now, "/tmp/doc.md"),
        ),
    )
    await k.set(scope, KeyWrite("/tmp/gone", Json.of("x"), source=USER_SOURCE))
    await k.set(scope, KeyWrite("/tmp/gone", Json.of(None), source=USER_SOURCE))
    # A tombstone whose slot compaction purged: only its history remains.
    await w.lifecycle.compactor.purge_tombstones(scope.partition, SecurityLevel.RESTRICTED)
    await k.set(scope, KeyWrite("/user/old2", Json.of("stays a tombstone"), source=USER_SOURCE))
    await k.set(scope, KeyWrite("/user/old2", Json.of(None), source=USER_SOURCE))

    await w.working.set(
        scope,
        WorkingMemoryWrite(
            scope=WorkingScope("thread-1", "doc-9"),
            content=Json.of({"goal": "book", "steps": [1, 2.5, {"x": None}]}),
            ttl=timedelta(hours=2),
            json_schema=Json.of({"type": "object"}),
        ),
    )
    await w.working.set(
        scope, WorkingMemoryWrite(scope=WorkingScope("", "res-only"), content=Json.of({}))
    )
    await w.profiles.set(scope, "# Agent\nBe concise.")
    await w.profiles.set(scope, "# Agent\nBe concise and kind.")

    s = w.sessions
    await s.inject(scope, "s1", FixedZoneKind.TRIGGER, "The dentist called.")
    await s.inject(scope, "s1", FixedZoneKind.INSTRUCTION, "Be brief.")
    await s.append(
        scope,
        "s1",
        [
            MessageDraft(
                MessageRole.USER if i % 2 else MessageRole.ASSISTANT,
                f"turn {i}",
                name="n" if i == 3 else "",
            )
            for i in range(35)
        ],
        ttl=timedelta(days=3),
        compression=SessionCompression(
            keep_recent_messages=4, offload_bytes=4096, merge_adjacent_messages=True
        ),
    )
    call = ToolCall("call-7", "lookup", {"q": "dentist", "n": [1, None]})
    await s.append(
        scope,
        "s1",
        [
            MessageDraft(MessageRole.ASSISTANT, "", tool_calls=(call,)),
            # Offloaded: an attachment record, the message a stub naming it.
            MessageDraft(MessageRole.TOOL, "found " + "a line of the result. " * 300, "lookup"),
            MessageDraft(MessageRole.TOOL, "found", tool_call_id="call-7"),
        ],
    )
    await s.append(
        scope,
        "s2",
        [MessageDraft(MessageRole.USER, "short session")],
        mode=LongTermMemoryMode.STATIC_CONTROL,
    )
    await s.end(scope, "s2", extract=False)

    await w.state.save(
        scope, "s1", [StateWrite("planner", Json.of({"step": 3, "plan": ["a", "b"]}))]
    )
    await w.state.save(
        scope, "s1", [StateWrite("planner", Json.of({"step": 4})), StateWrite("cache", Json.of({}))]
    )


async def everything(
    w: World, partition: Partition
) -> tuple[list[Memory], dict[RecordKind, list[Record]]]:
    """Every memory (with vectors) and every record of a partition, in a stable order."""
    listed = await w.store.list(
        partition, EVERYTHING, ListPage(MemoryOrder.CREATED_ASC, limit=100_000)
    )
    memories = await w.store.get(partition, [x.id for x in listed], with_vectors=True)
    memories.sort(key=lambda x: x.id)
    records = {
        kind: await w.records.list_records(partition, kind, KeyPage(limit=100_000))
        for kind in RecordKind
    }
    return memories, records


def memory_fields(m: Memory) -> dict[str, Any]:
    out = {name: getattr(m, name) for name in Memory.__slots__ if name != "vector"}  # type: ignore[attr-defined]
    out["vector"] = None if m.vector is None else np.asarray(m.vector).tobytes()
    out["metadata_json"] = m.metadata_text()  # "" and its JSON are one spelling
    return out
