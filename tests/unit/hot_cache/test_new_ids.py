"""The hot cache tells LanceDB which ids are new and which are stored (a loaded
partition is complete), so writes skip the existence lookup, an update is never
appended twice, and a wrong "stored" hint still stores the row."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from memoryd.domain.models import MemoryFilter
from memoryd.storage.base import UpsertHints
from memoryd.storage.hot.cache import HotCacheStore
from memoryd.storage.lancedb.store import LanceDBStore

from .helpers import DIM, P, memory, unit_vector


async def test_new_ids_skip_the_lookup_and_updates_stay_single_rows(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    inner = LanceDBStore(tmp_path / "lancedb", DIM)
    store = HotCacheStore(inner, dimension=DIM, budget_bytes=2**24)
    await store.open()
    rng = np.random.default_rng(2)
    looked_up: list[list[str]] = []
    real_lookup = inner._stored_ids

    async def spy(table: Any, partition: Any, ids: Any) -> set[str]:
        looked_up.append(list(ids))
        return await real_lookup(table, partition, ids)

    monkeypatch.setattr(inner, "_stored_ids", spy)
    try:
        # Not loaded yet: the store looks every id up.
        await store.upsert(P, [memory(id="a", vector=unit_vector(rng))])
        assert looked_up == [["a"]]
        await store.search(P, unit_vector(rng), MemoryFilter(), 5)  # loads the partition
        looked_up.clear()
        await store.upsert(P, [memory(id="b", vector=unit_vector(rng))])
        assert looked_up == []  # new, and the loaded partition knows it
        moved = unit_vector(rng)
        await store.upsert(
            P, [memory(id="b", vector=moved, content="b, edited"), memory(id="c", vector=moved)]
        )
        assert looked_up == []  # b is held by the partition, c is not: both known
        table = inner._tbl()
        assert await table.count_rows("id = 'b'") == 1
        assert await table.count_rows() == 3
        [b] = await inner.get(P, ["b"])
        assert b.content == "b, edited"
        # A "stored" hint for an id the table lacks: inserted all the same, once.
        await inner.upsert(
            P, [memory(id="d", vector=moved)], UpsertHints(stored_ids=frozenset({"d"}))
        )
        assert await table.count_rows("id = 'd'") == 1
        assert looked_up == []
    finally:
        await store.close()
