"""The door: authentication, then the role, then the agent, then the input's own
errors; audit fields from the operation's definition; degradations in the outcome."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from memoryd.domain.errors import InvalidArgument, NotFound, PermissionDenied, Unauthenticated
from memoryd.domain.models import Partition, SecurityLevel
from memoryd.domain.principal import Principal, Role
from memoryd.domain.requests import ListQuery, MemoryDraft, RecallQuery
from memoryd.operations import Call, Door, Services
from memoryd.operations import memories as ops
from memoryd.operations.auth import AUTHORIZATION, Transport
from memoryd.operations.memories import MemoryIds, MemoryRef
from memoryd.resilience.degradation import ComponentStates
from memoryd.security.audit import AuditLog
from memoryd.security.masking import Masker
from memoryd.security.read_trail import ReadTrail
from memoryd.security.settings import MaskingSettings
from tests.unit.service.helpers import Harness, harness, scope_for  # noqa: F401 (fixture)

PRINCIPALS = {
    "writer": Principal(
        "writer", "t1", frozenset({"a1"}), SecurityLevel.RESTRICTED, frozenset(Role)
    ),
    "reader": Principal(
        "reader", "t1", frozenset({"a1"}), SecurityLevel.RESTRICTED, frozenset({Role.READ})
    ),
}


class Keys:
    """The transport's identity, as api_key mode reads it: one bearer token per principal."""

    mode = "api_key"
    uses_auth_context = False

    def authenticate(self, transport: Transport) -> Principal:
        for key, value in transport.metadata:
            if key == AUTHORIZATION and str(value).removeprefix("Bearer ") in PRINCIPALS:
                return PRINCIPALS[str(value).removeprefix("Bearer ")]
        raise Unauthenticated("missing credential")


def call_as(who: str | None) -> Call:
    metadata = ((AUTHORIZATION, f"Bearer {who}"),) if who else ()
    return Call("req-1", "/test/op", Transport(metadata=metadata, peer="ipv4:127.0.0.1:1"))


@pytest.fixture
async def audited(
    tmp_path: Path,
    harness: Harness,  # noqa: F811
) -> AsyncIterator[tuple[Door, AuditLog, Path, ComponentStates]]:
    audit = AuditLog(tmp_path / "audit", rotate_bytes=1 << 20, keep_files=0)
    audit.start()
    states = ComponentStates()
    door = Door(
        Services(memories=harness.service),
        Keys(),
        audit=audit,
        read_trail=ReadTrail(audit, enabled=True),
        states=states,
    )
    yield door, audit, tmp_path / "audit" / "audit.jsonl", states
    await audit.close()


def events(path: Path) -> list[dict[str, object]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def bad_draft() -> MemoryDraft:
    raise InvalidArgument.field("content", "must not be empty")


async def test_a_denied_caller_learns_nothing_about_its_input(
    audited: tuple[Door, AuditLog, Path, ComponentStates],
    harness: Harness,  # noqa: F811
) -> None:
    door, _, _, _ = audited
    with pytest.raises(Unauthenticated):
        await door.run(ops.REMEMBER, call_as(None), "a1", bad_draft)
    reader = call_as("reader")
    with pytest.raises(PermissionDenied, match="'write' role"):
        await door.run(ops.REMEMBER, reader, "a1", bad_draft)
    assert reader.code == "PERMISSION_DENIED" and reader.principal == PRINCIPALS["reader"]
    with pytest.raises(PermissionDenied, match="may not act for agent 'a2'"):
        await door.run(ops.REMEMBER, call_as("writer"), "a2", bad_draft)
    # Allowed caller, allowed agent: now the input's own error, naming the field.
    with pytest.raises(InvalidArgument) as bad:
        await door.run(ops.REMEMBER, call_as("writer"), "a1", bad_draft)
    assert [v.field for v in bad.value.violations] == ["content"]
    page = await harness.service.list_memories(scope_for("a1"), ListQuery())
    assert page.memories == []


async def test_audit_fields_and_the_read_trail_come_from_the_operation(
    audited: tuple[Door, AuditLog, Path, ComponentStates],
) -> None:
    door, audit, path, _ = audited
    stored = await door.run(ops.REMEMBER, call_as("writer"), "a1", lambda: MemoryDraft("tea"))
    with pytest.raises(PermissionDenied):
        await door.run(ops.FORGET_MEMORIES, call_as("reader"), "a1", lambda: MemoryIds(("m1",)))
    recalled = await door.run(ops.RECALL, call_as("reader"), "a1", lambda: RecallQuery("tea"))
    memory_id = stored.value.memory.id
    assert [r.memory.id for r in recalled.value.results] == [memory_id]
    await audit.close()
    found = {(e["operation"], e["outcome"]): e for e in events(path)}
    assert "ids" not in found["MemoryService.Remember", "STARTED"]
    assert found["MemoryService.Remember", "OK"]["ids"] == [memory_id]
    denial = found["MemoryService.ForgetMemories", "PERMISSION_DENIED"]
    assert denial["ids"] == ["m1"] and denial["principal"] == "reader"
    assert "'write' role" in str(denial["reason"])
    trail = found["MemoryService.Recall", "OK"]
    assert trail["ids"] == [memory_id] and trail["key"] == "read"


async def test_the_outcome_carries_what_the_call_was_degraded_by(
    audited: tuple[Door, AuditLog, Path, ComponentStates],
) -> None:
    door, _, _, states = audited
    states.set("store", ok=False, reason="store unavailable")
    out = await door.run(ops.REMEMBER, call_as("writer"), "a1", lambda: MemoryDraft("tea"))
    assert [(d.component, d.reason) for d in out.degraded] == [("store", "store unavailable")]
    states.set("store", ok=True)
    out = await door.run(ops.REMEMBER, call_as("writer"), "a1", lambda: MemoryDraft("coffee"))
    assert out.degraded == ()


LOW = Principal("low", "t1", frozenset({"a1"}), SecurityLevel.INTERNAL, frozenset(Role))
PII = "reach alice@example.com or +1 415-555-0100"


class WithLow(Keys):
    def authenticate(self, transport: Transport) -> Principal:
        if tuple(transport.metadata) == ((AUTHORIZATION, "Bearer low"),):
            return LOW
        return super().authenticate(transport)


async def test_the_door_masks_every_outcome_for_a_low_clearance_caller(
    tmp_path: Path,
    harness: Harness,  # noqa: F811
) -> None:
    audit = AuditLog(tmp_path / "audit", rotate_bytes=1 << 20, keep_files=0)
    audit.start()
    door = Door(
        Services(memories=harness.service),
        WithLow(),
        audit=audit,
        read_trail=ReadTrail(audit, enabled=True),
        masker=Masker(MaskingSettings(enabled=True)),
    )
    draft = MemoryDraft(PII, tags=("alice@example.com",), metadata={"phone": "+1 415-555-0100"})
    # A write's answer is masked too (the caller wrote it, but reads at its clearance).
    written = await door.run(ops.REMEMBER, call_as("low"), "a1", lambda: draft)
    assert written.masked and written.value.memory.content == "reach [email] or [phone]"
    memory_id = written.value.memory.id
    got = await door.run(ops.GET_MEMORY, call_as("low"), "a1", lambda: MemoryRef(memory_id))
    assert got.value.tags == ("[email]",) and got.value.metadata == {"phone": "[phone]"}
    assert got.value.id == memory_id
    recalled = await door.run(ops.RECALL, call_as("low"), "a1", lambda: RecallQuery("alice"))
    assert [r.memory.content for r in recalled.value.results] == ["reach [email] or [phone]"]
    # Stored as written: a cleared caller reads it.
    full = await door.run(ops.GET_MEMORY, call_as("writer"), "a1", lambda: MemoryRef(memory_id))
    assert full.value.content == PII and not full.masked
    # An error's message is masked as well.
    with pytest.raises(NotFound) as missing:
        await door.run(ops.GET_MEMORY, call_as("low"), "a1", lambda: MemoryRef("bob@example.com"))
    assert "bob@example.com" not in missing.value.message
    await audit.close()
    trail = [e for e in events(tmp_path / "audit" / "audit.jsonl") if e["principal"] == "low"]
    assert [memory_id] in [e.get("ids") for e in trail]  # the trail names real ids


async def test_the_door_tells_on_write_of_each_successful_write_only(
    harness: Harness,  # noqa: F811
) -> None:
    """memory.md / learnings.md are refreshed from here: every write that succeeded,
    never a read, a denial or a failed call."""
    written: list[Partition] = []
    door = Door(Services(memories=harness.service), Keys(), on_write=written.append)
    await door.run(ops.REMEMBER, call_as("writer"), "a1", lambda: MemoryDraft("hello"))
    assert written == [Partition("t1", "a1")]
    await door.run(ops.LIST_MEMORIES, call_as("writer"), "a1", lambda: ListQuery())
    with pytest.raises(PermissionDenied):
        await door.run(ops.REMEMBER, call_as("reader"), "a1", lambda: MemoryDraft("no"))
    with pytest.raises(InvalidArgument):
        await door.run(ops.REMEMBER, call_as("writer"), "a1", bad_draft)
    assert written == [Partition("t1", "a1")]
