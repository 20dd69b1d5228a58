"""The values a Store call takes (storage/base.py): ListPage is checked once when
built, so no backend sees a page it cannot list; its keyset step and the hints'
union are what every backend and layer relies on."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memoryd.domain.models import Memory, MemoryOrder, PageCursor, VectorHit
from memoryd.storage.base import NEWEST, ListPage, Nearest, UpsertHints

T0 = datetime(2024, 5, 1, tzinfo=UTC)


def _memory(memory_id: str, seconds: int) -> Memory:
    return Memory(
        id=memory_id,
        tenant_id="t",
        agent_id="a",
        content=memory_id,
        created_at=T0 + timedelta(seconds=seconds),
        updated_at=T0,
    )


@pytest.mark.parametrize("limit", [0, -1])
def test_a_page_holds_at_least_one_memory(limit: int) -> None:
    with pytest.raises(ValueError, match="at least one"):
        ListPage(limit=limit)


@pytest.mark.parametrize("order", [MemoryOrder.ACCESS_COUNT_DESC, MemoryOrder.IMPORTANCE_DESC])
def test_the_store_lists_by_creation_only(order: MemoryOrder) -> None:
    with pytest.raises(ValueError, match="by creation only"):
        ListPage(order)


def test_the_default_page_is_the_newest_fifty() -> None:
    assert (NEWEST.order, NEWEST.after, NEWEST.limit) == (MemoryOrder.CREATED_DESC, None, 50)
    assert NEWEST.descending
    assert not ListPage(MemoryOrder.CREATED_ASC).descending


@pytest.mark.parametrize("order", [MemoryOrder.CREATED_DESC, MemoryOrder.CREATED_ASC])
def test_admits_exactly_what_lies_past_the_cursor(order: MemoryOrder) -> None:
    # Two memories share the cursor's created_at: the id breaks the tie.
    rows = [_memory("a", 0), _memory("b", 1), _memory("c", 1), _memory("d", 2)]
    first = ListPage(order)
    assert all(first.admits(m) for m in rows)
    page = first.following(rows[1])
    assert page.after == PageCursor(rows[1].created_at, "b")
    assert (page.order, page.limit) == (order, first.limit)
    admitted = [m.id for m in rows if page.admits(m)]
    assert admitted == (["a"] if order is MemoryOrder.CREATED_DESC else ["c", "d"])


def test_widened_keeps_the_page_and_grows_the_limit() -> None:
    page = ListPage(MemoryOrder.CREATED_ASC, PageCursor(T0, "x"), 3)
    assert page.widened(2) == ListPage(MemoryOrder.CREATED_ASC, PageCursor(T0, "x"), 5)
    assert Nearest(3, 0.5).widened(2) == Nearest(5, 0.5)


def test_nearest_keeps_the_hits_at_or_above_the_cut() -> None:
    hits = [VectorHit(_memory(i, 0), s) for i, s in [("a", 0.9), ("b", 0.5), ("c", 0.49)]]
    assert Nearest(3).kept(hits) == hits
    assert [h.memory.id for h in Nearest(3, min_similarity=0.5).kept(hits)] == ["a", "b"]
    assert Nearest(3, min_similarity=0.95).kept(hits) == []


def test_hints_know_the_new_and_the_stored_ids() -> None:
    hints = UpsertHints(new_ids=frozenset({"n"}), stored_ids=frozenset({"s"}))
    assert hints.known == {"n", "s"}
    assert UpsertHints().known == frozenset()
