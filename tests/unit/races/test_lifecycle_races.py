"""Lifecycle operations racing edits of the same memory through the services, over the
daemon's compositions of real stores: Archive / Restore, Consolidate and its undo,
Compact's merges never revert an acknowledged change, and an undo is never refused
for a consolidation it should undo (issue 30)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from memoryd.domain.lifecycle import CompactOptions, ConsolidateOptions, ConsolidateResult
from memoryd.domain.models import Partition
from memoryd.domain.principal import CallScope
from memoryd.domain.relations import superseded_by

from .harness import (
    Check,
    Rig,
    acknowledged,
    both,
    fresh_scope,
    ids,
    patch,
    reverted,
    rig,
    trials_on,
)


async def test_archive_against_update(chain: str, tmp_path: Path) -> None:
    async with rig(chain, tmp_path) as r:
        s = fresh_scope()  # one agent: its trials are applied together

        async def run(i: int) -> Check:
            m = await r.remember(s, f"trial {i}: the original text")
            content = f"trial {i}: the edited text"
            a, b = await both(
                r.memories.update(s, m.id, patch(content=content)),
                r.other.lifecycle.archive(s, ids(m.id)),
            )
            assert acknowledged(a) and b == 1, b

            async def check() -> bool:
                got = await r.stored(s, m.id)
                return (got.content, got.archived, got.version) == (content, True, 3)

            return check

        assert not await reverted(run)


async def test_restore_against_update(chain: str, tmp_path: Path) -> None:
    async with rig(chain, tmp_path) as r:
        s = fresh_scope()  # one agent: its trials are applied together

        async def run(i: int) -> Check:
            m = await r.remember(s, f"trial {i}: the original text")
            assert await r.lifecycle.archive(s, ids(m.id)) == 1
            tags = (f"tag-{i}",)
            a, b = await both(
                r.memories.update(s, m.id, patch(tags=tags)),
                r.other.lifecycle.restore(s, ids(m.id)),
            )
            assert acknowledged(a) and b == 1, b

            async def check() -> bool:
                got = await r.stored(s, m.id)
                return (got.tags, got.archived, got.version) == (tags, False, 4)

            return check

        assert not await reverted(run)


async def _consolidated(r: Rig, s: CallScope, i: int) -> ConsolidateResult:
    """Consolidate the memories of trial ``i`` (its tag; every one is old enough)."""
    options = ConsolidateOptions(min_age_days=1, min_group_size=2, tags=(f"trip-{i}",))
    last = None
    async for event in r.lifecycle.consolidate(s, options):
        last = event
    assert isinstance(last, ConsolidateResult)
    return last


async def _trip(r: Rig, s: CallScope, i: int, *things: str) -> list[str]:
    """Memories of trial ``i``'s trip, ten days old: the ids."""
    old = r.older(days=10)
    return [
        (await r.remember(s, f"Trial {i}: the {t} is booked.", tags=(f"trip-{i}",), **old)).id
        for t in things
    ]


async def test_consolidate_and_undo_against_update(chain: str, tmp_path: Path) -> None:
    """Consolidation racing an edit of one of the memories it condenses, then its undo:
    the edited text is never archived under the derived memory, and the undo is never
    refused and brings every original back with its latest text."""
    async with rig(chain, tmp_path, relations=False) as r:
        s = fresh_scope()  # one agent: its trials are applied together

        async def run(i: int) -> Check:
            hotel, *others = await _trip(r, s, i, "hotel", "train", "museum")
            edited = f"Trial {i}: the hotel moved to Friday."
            done, edit = await both(
                _consolidated(r, s, i), r.other.memories.update(s, hotel, patch(content=edited))
            )
            assert acknowledged(done) and acknowledged(edit)
            assert isinstance(done, ConsolidateResult) and done.details
            # What the consolidation says it archived is archived, under its derived
            # memory; the edit is there whichever landed first.
            consolidated = [
                (m, superseded_by((await r.stored(s, m)).metadata) == g.derived_id)
                for g in done.details
                for m in g.source_ids
            ]
            edit_kept = (await r.stored(s, hotel)).content == edited
            derived = [g.derived_id for g in done.details]
            undone, _ = await r.lifecycle.undo_consolidation(s, ids(*derived))

            async def check() -> bool:
                back = [await r.stored(s, m) for m in (hotel, *others)]
                return (
                    edit_kept
                    and all(archived for _, archived in consolidated)
                    and undone == len(derived)
                    and back[0].content == edited
                    and not any(m.archived for m in back)
                )

            return check

        assert not await reverted(run, trials_on(chain, heavy=True))


async def test_undo_against_update_of_an_original(chain: str, tmp_path: Path) -> None:
    """An archived original edited while its consolidation is undone: it comes back
    with the edit."""
    async with rig(chain, tmp_path, relations=False) as r:
        s = fresh_scope()  # one agent: its trials are applied together

        async def run(i: int) -> Check:
            hotel, _ = await _trip(r, s, i, "hotel", "train")
            [derived] = [g.derived_id for g in (await _consolidated(r, s, i)).details]
            edited = f"Trial {i}: the hotel moved to Friday."
            undo, edit = await both(
                r.lifecycle.undo_consolidation(s, ids(derived)),
                r.other.memories.update(s, hotel, patch(content=edited)),
            )
            assert undo == (1, 2) and acknowledged(edit), undo

            async def check() -> bool:
                got = await r.stored(s, hotel)
                return got.content == edited and not got.archived

            return check

        assert not await reverted(run, trials_on(chain, heavy=True))


async def test_compaction_against_update(
    chain: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Compact merges near-duplicates and deletes the absorbed ones; an edit of one of
    them lands right after the merge's search found it (every trial: the store's
    search is wrapped to let it in there). The edit is never deleted with its memory."""
    options = CompactOptions(merge_group_threshold=2, merge_similarity=0.5)
    async with rig(chain, tmp_path) as r:
        store = r.one.store
        search = store.search_many
        edits: dict[Partition, Callable[[], Awaitable[object]]] = {}

        async def then_edit(partition: Partition, *args: Any, **kwargs: Any) -> Any:
            hits = await search(partition, *args, **kwargs)
            edit = edits.pop(partition, None)
            if edit is not None:
                await edit()
            return hits

        monkeypatch.setattr(store, "search_many", then_edit)

        async def run(i: int) -> Check:
            s = fresh_scope()
            older = await r.remember(s, f"trial {i} the cat sat on the mat", tags=("cat",))
            for when in ("today", "again"):  # a group above merge_group_threshold
                await r.remember(s, f"trial {i} the cat sat on the mat {when}", tags=("cat",))
            edited = f"trial {i} the dog sat on the rug instead"
            edits[s.partition] = lambda: r.other.memories.update(s, older.id, patch(content=edited))
            async for _ in r.lifecycle.compactor.merge(
                s.partition, s.clearance, options, r.clock()
            ):
                pass
            assert s.partition not in edits  # the edit ran

            async def check() -> bool:
                found = await store.get(s.partition, [older.id])
                return bool(found) and found[0].content == edited

            return check

        assert not await reverted(run, trials_on(chain, heavy=True))
