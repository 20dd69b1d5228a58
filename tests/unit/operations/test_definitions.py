"""What each operation tells the audit log it touched: ids and keys, never content."""

from __future__ import annotations

from datetime import UTC, datetime

from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyEntry, KeyWrite
from memoryd.domain.lifecycle import MemorySelector
from memoryd.domain.models import Memory
from memoryd.domain.requests import RememberOutcome
from memoryd.operations import OPERATIONS, keyed, lifecycle, memories
from memoryd.operations.agent_state import APPEND_MESSAGES, Append

NOW = datetime(2026, 1, 1, tzinfo=UTC)


def memory(memory_id: str) -> Memory:
    return Memory(
        id=memory_id, tenant_id="t", agent_id="a", content="x", created_at=NOW, updated_at=NOW
    )


def test_a_batch_names_every_result_in_order_once() -> None:
    out = [RememberOutcome(memory(i)) for i in ("a", "b", "a", "c")]
    ids, key = memories.REMEMBER_BATCH.touched_out(out)
    assert list(dict.fromkeys(ids)) == ["a", "b", "c"] and key == ""


def test_ids_selectors_keys_and_sessions() -> None:
    assert memories.FORGET_MEMORIES.touched_in(memories.MemoryIds(("m1", "m2"))) == (
        ("m1", "m2"),
        "",
    )
    selection = lifecycle.Selection(MemorySelector(ids=("s1",)))
    assert lifecycle.ARCHIVE.touched_in(selection) == (("s1",), "")
    assert keyed.SET_MEMORY.touched_in(KeyWrite("/profile/name", Json.of("Ada"))) == (
        (),
        "/profile/name",
    )
    entry = KeyEntry("/profile/name", "Ada", True, 2, NOW, memory_id="m9")
    assert keyed.SET_MEMORY.touched_out(entry) == (("m9",), "/profile/name")
    assert APPEND_MESSAGES.touched_in(Append("s-1", ())) == ((), "session:s-1")


def test_every_operation_is_named_after_its_rpc_once() -> None:
    names = [op.name for op in OPERATIONS]
    assert len(names) == len(set(names))
    assert all(op.service.endswith("Service") and op.method for op in OPERATIONS)
