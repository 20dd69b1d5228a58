"""CachingEmbedder: counts, in-call deduplication and LRU eviction."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from memoryd.embedding import CachingEmbedder, EmbedKind, HashingEmbedder


class CountingEmbedder:
    """A real HashingEmbedder that records what it was asked to embed."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(64)
        self.calls: list[list[str]] = []
        self.closed = False

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(
        self, texts: Sequence[str], *, kind: EmbedKind = "document"
    ) -> npt.NDArray[np.float32]:
        self.calls.append(list(texts))
        return await self.inner.embed(texts, kind=kind)

    async def close(self) -> None:
        self.closed = True


@pytest.fixture
def counting() -> CountingEmbedder:
    return CountingEmbedder()


async def test_hits_and_misses(counting: CountingEmbedder) -> None:
    cache = CachingEmbedder(counting, max_entries=10)

    first = await cache.embed(["a", "b"])
    second = await cache.embed(["b", "a", "c"])

    assert counting.calls == [["a", "b"], ["c"]]
    assert (cache.misses, cache.hits) == (3, 2)
    np.testing.assert_array_equal(second[:2], first[::-1])
    np.testing.assert_array_equal(second, await counting.inner.embed(["b", "a", "c"]))


async def test_duplicates_in_one_call_are_embedded_once(counting: CountingEmbedder) -> None:
    cache = CachingEmbedder(counting, max_entries=10)

    vectors = await cache.embed(["x", "y", "x", "x"])

    assert counting.calls == [["x", "y"]]
    assert (cache.misses, cache.hits) == (2, 2)
    np.testing.assert_array_equal(vectors[0], vectors[2])
    np.testing.assert_array_equal(vectors[0], vectors[3])


async def test_kind_is_part_of_the_key(counting: CountingEmbedder) -> None:
    cache = CachingEmbedder(counting, max_entries=10)
    await cache.embed(["q"], kind="query")
    await cache.embed(["q"], kind="document")
    assert len(counting.calls) == 2


async def test_lru_eviction(counting: CountingEmbedder) -> None:
    cache = CachingEmbedder(counting, max_entries=2)
    await cache.embed(["a"])
    await cache.embed(["b"])
    await cache.embed(["a"])  # a is now the most recently used
    await cache.embed(["c"])  # evicts b
    assert len(cache) == 2

    counting.calls.clear()
    await cache.embed(["a", "c"])
    assert counting.calls == []
    await cache.embed(["b"])
    assert counting.calls == [["b"]]


async def test_returned_arrays_do_not_alias_the_cache(counting: CountingEmbedder) -> None:
    cache = CachingEmbedder(counting, max_entries=10)
    first = await cache.embed(["a"])
    first[:] = 0.0
    again = await cache.embed(["a"])
    assert np.linalg.norm(again[0]) == pytest.approx(1.0, abs=1e-5)


async def test_empty_request_and_delegation(counting: CountingEmbedder) -> None:
    cache = CachingEmbedder(counting, max_entries=1)
    assert (await cache.embed([])).shape == (0, 64)
    assert (cache.model_id, cache.dimension) == ("hashing-v1-64", 64)
    await cache.close()
    assert counting.closed


def test_rejects_non_positive_size(counting: CountingEmbedder) -> None:
    with pytest.raises(ValueError):
        CachingEmbedder(counting, max_entries=0)
