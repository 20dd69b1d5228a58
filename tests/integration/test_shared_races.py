"""The same races between two replicas sharing one real Qdrant server (no log, each
with its own services and process state): the server's conditional upserts decide,
and no acknowledged change is reverted by the other replica's."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.qdrant_server import QdrantServer
from tests.unit.races.harness import (
    Check,
    Rig,
    acknowledged,
    both,
    fresh_scope,
    ids,
    patch,
    reverted,
    rig,
)


@pytest.fixture
async def replicas(tmp_path: Path, qdrant_server: QdrantServer) -> AsyncIterator[Rig]:
    async with rig("qdrant-shared", tmp_path, qdrant_server) as r:
        assert r.one is not r.other and r.one.store.capabilities.shared
        yield r


async def test_update_content_against_update_tags_on_another_replica(replicas: Rig) -> None:
    r = replicas
    s = fresh_scope()

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


async def test_archive_against_update_on_another_replica(replicas: Rig) -> None:
    r = replicas
    s = fresh_scope()

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
