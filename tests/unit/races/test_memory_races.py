"""Concurrent pairs of operations on one memory through the memory service, over the
daemon's compositions of real stores: no acknowledged change is ever reverted by the
other operation of its pair (issue 30, "lost updates on one memory")."""

from __future__ import annotations

from pathlib import Path

from memoryd.domain.models import AccessUpdate
from memoryd.domain.relations import superseded_by
from memoryd.domain.requests import MemoryDraft, RememberOutcome

from .harness import Check, acknowledged, both, fresh_scope, patch, reverted, rig, trials_on


async def test_update_content_against_update_tags(chain: str, tmp_path: Path) -> None:
    async with rig(chain, tmp_path) as r:
        s = fresh_scope()  # one agent: its trials are applied together

        async def run(i: int) -> Check:
            m = await r.remember(s, f"trial {i}: the original text")
            content, tags = f"trial {i}: the edited text", (f"tag-{i}",)
            a, b = await both(
                r.memories.update(s, m.id, patch(content=content)),
                r.other.memories.update(s, m.id, patch(tags=tags)),
            )
            assert acknowledged(a) and acknowledged(b)

            async def check() -> bool:
                got = await r.stored(s, m.id)
                return (got.content, got.tags, got.version) == (content, tags, 3)

            return check

        assert not await reverted(run)


async def test_update_content_against_update_content(chain: str, tmp_path: Path) -> None:
    """Two edits of the same field: the one that lands second is stored, computed from
    the first (the other fields of both stay, the version counts both)."""
    async with rig(chain, tmp_path) as r:
        s = fresh_scope()  # one agent: its trials are applied together

        async def run(i: int) -> Check:
            m = await r.remember(s, f"trial {i}: the original text")
            first, second = f"trial {i}: edit one", f"trial {i}: edit two"
            a, b = await both(
                r.memories.update(s, m.id, patch(content=first, importance=0.9)),
                r.other.memories.update(s, m.id, patch(content=second, confidence=0.1)),
            )
            assert acknowledged(a) and acknowledged(b)

            async def check() -> bool:
                got = await r.stored(s, m.id)
                return (
                    got.version == 3
                    and got.content in (first, second)
                    and (got.importance, got.confidence) == (0.9, 0.1)
                )

            return check

        assert not await reverted(run)


async def test_deduplicated_remember_against_update(chain: str, tmp_path: Path) -> None:
    """Remember of a duplicate merges into the memory (a read-modify-write of it) while
    an update changes its tags: the merged text and the new tags both stay."""
    async with rig(chain, tmp_path) as r:
        s = fresh_scope()  # one agent: its trials are applied together

        async def run(i: int) -> Check:
            m = await r.remember(s, f"Trial {i} says the sky is green")
            again = f"trial {i} SAYS the sky is   green"
            a, b = await both(
                r.memories.remember(s, MemoryDraft(again, tags=("merged",))),
                r.other.memories.update(s, m.id, patch(tags=(f"tag-{i}",))),
            )
            assert acknowledged(a) and acknowledged(b)
            assert isinstance(a, RememberOutcome) and a.deduplicated and a.memory.id == m.id

            async def check() -> bool:
                got = await r.stored(s, m.id)
                return got.content == again and f"tag-{i}" in got.tags and got.version == 3

            return check

        assert not await reverted(run)


async def test_superseding_remember_against_update(chain: str, tmp_path: Path) -> None:
    """Remember of a newer preference archives the older memory with a relation (a
    read-modify-write of it) while an update changes the older one's tags: both land."""
    async with rig(chain, tmp_path) as r:

        async def run(i: int) -> Check:
            s = fresh_scope()
            old = await r.remember(s, "The user prefers dark blue for slides")
            a, b = await both(
                r.memories.remember(s, MemoryDraft("The user prefers red for slides")),
                r.other.memories.update(s, old.id, patch(tags=(f"tag-{i}",))),
            )
            assert acknowledged(a) and acknowledged(b)
            assert isinstance(a, RememberOutcome)

            async def check() -> bool:
                got = await r.stored(s, old.id)
                return (
                    got.archived
                    and superseded_by(got.metadata) == a.memory.id
                    and got.tags == (f"tag-{i}",)
                )

            return check

        assert not await reverted(run, trials_on(chain, heavy=True))


async def test_access_statistics_against_update(chain: str, tmp_path: Path) -> None:
    """Reads recorded and flushed while the memory is edited: the edit stays, every
    read is counted, and counting moves no version."""
    async with rig(chain, tmp_path) as r:
        s = fresh_scope()  # one agent: its trials are applied together

        async def run(i: int) -> Check:
            m = await r.remember(s, f"trial {i}: the original text")
            content = f"trial {i}: the edited text"

            async def read_and_flush() -> None:
                await r.memories.get(s, m.id)
                await r.one.access.flush()

            edit = r.other.memories.update(s, m.id, patch(content=content))
            a, b = await both(edit, read_and_flush())
            assert acknowledged(a) and acknowledged(b)

            async def check() -> bool:
                await r.one.access.flush()  # a read another trial's flush had taken
                got = await r.stored(s, m.id)
                return (got.content, got.version, got.access_count) == (content, 2, 1)

            return check

        assert not await reverted(run, trials_on(chain, heavy=True))


async def test_flush_racing_an_update_of_another_field(chain: str, tmp_path: Path) -> None:
    """The store's record_access racing the conditional write itself (not only the
    buffer around it): neither the counts nor the edit are lost."""
    async with rig(chain, tmp_path) as r:
        s = fresh_scope()  # one agent: its trials are applied together

        async def run(i: int) -> Check:
            m = await r.remember(s, f"trial {i}: counted")
            flush = r.one.store.record_access(s.partition, {m.id: AccessUpdate(3, r.clock())})
            a, b = await both(r.other.memories.update(s, m.id, patch(tags=("t",))), flush)
            assert acknowledged(a) and acknowledged(b)

            async def check() -> bool:
                got = await r.stored(s, m.id)
                return (got.tags, got.access_count, got.version) == (("t",), 3, 2)

            return check

        assert not await reverted(run, trials_on(chain, heavy=True))
