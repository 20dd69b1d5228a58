"""Documents batched across callers (embedding/batcher.py): concurrent requests share
a model call, a lone one goes at once, queries never wait behind documents, and a
failing call fails only the requests it carried."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from memoryd.domain.errors import EmbeddingError
from memoryd.embedding.base import EmbedKind
from memoryd.embedding.batcher import BatchingEmbedder
from memoryd.embedding.hashing import HashingEmbedder
from memoryd.embedding.urgency import awaited_by_a_read


class SlowModel:
    """The hashing embedder behind a gate: each call waits until released, and every
    call (its texts and kind) is recorded."""

    def __init__(self) -> None:
        self.inner = HashingEmbedder(16)
        self.calls: list[tuple[list[str], str]] = []
        self.gate = asyncio.Event()
        self.fail = False

    @property
    def model_id(self) -> str:
        return self.inner.model_id

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    async def embed(
        self, texts: Sequence[str], *, kind: EmbedKind = "document"
    ) -> npt.NDArray[np.float32]:
        self.calls.append((list(texts), kind))
        await self.gate.wait()
        if self.fail:
            raise EmbeddingError("model down")
        return await self.inner.embed(texts, kind=kind)

    async def close(self) -> None:
        return None


async def test_requests_arriving_during_a_call_share_the_next_one() -> None:
    model = SlowModel()
    batcher = BatchingEmbedder(model, max_batch=64)
    first = asyncio.ensure_future(batcher.embed(["a"]))
    await asyncio.sleep(0.01)
    assert model.calls == [(["a"], "document")]  # a lone request goes at once
    rest = [asyncio.ensure_future(batcher.embed([t])) for t in ("b", "c", "d")]
    await asyncio.sleep(0.01)
    model.gate.set()
    vectors = await asyncio.gather(first, *rest)
    assert model.calls == [(["a"], "document"), (["b", "c", "d"], "document")]
    for text, got in zip("abcd", vectors, strict=True):
        np.testing.assert_array_equal(got, await model.inner.embed([text]))
    assert (batcher.batches, batcher.requests) == (2, 4)


async def test_a_query_does_not_wait_behind_documents() -> None:
    model = SlowModel()
    batcher = BatchingEmbedder(model, max_batch=64)
    documents = [asyncio.ensure_future(batcher.embed([f"d{i}"])) for i in range(3)]
    await asyncio.sleep(0.01)
    query = asyncio.ensure_future(batcher.embed(["what?"], kind="query"))
    await asyncio.sleep(0.01)
    # The query went to the model on its own, while documents were still waiting.
    assert (["what?"], "query") in model.calls
    assert all(kind == "document" for texts, kind in model.calls if texts != ["what?"])
    model.gate.set()
    await asyncio.gather(query, *documents)


async def test_a_document_a_read_waits_for_does_not_wait_behind_documents() -> None:
    model = SlowModel()
    batcher = BatchingEmbedder(model, max_batch=64)
    documents = [asyncio.ensure_future(batcher.embed(["d0"]))]
    await asyncio.sleep(0.01)  # d0 in the model; d1 and d2 wait for the next call
    documents += [asyncio.ensure_future(batcher.embed([f"d{i}"])) for i in (1, 2)]
    await asyncio.sleep(0.01)
    with awaited_by_a_read():
        mirror = asyncio.ensure_future(batcher.embed(["the key's value"]))
    await asyncio.sleep(0.01)
    # It went to the model on its own (as a document), while d1 and d2 still wait.
    assert model.calls == [(["d0"], "document"), (["the key's value"], "document")]
    model.gate.set()
    await asyncio.gather(mirror, *documents)


async def test_a_batch_never_exceeds_max_batch_and_a_big_request_goes_straight() -> None:
    model = SlowModel()
    batcher = BatchingEmbedder(model, max_batch=4)
    blocker = asyncio.ensure_future(batcher.embed(["x"]))
    await asyncio.sleep(0.01)
    small = [asyncio.ensure_future(batcher.embed([f"s{i}", f"t{i}"])) for i in range(3)]
    big = asyncio.ensure_future(batcher.embed([f"b{i}" for i in range(4)]))
    await asyncio.sleep(0.01)
    model.gate.set()
    await asyncio.gather(blocker, big, *small)
    assert all(len(texts) <= 4 for texts, _ in model.calls)
    assert [f"b{i}" for i in range(4)] in [texts for texts, _ in model.calls]


async def test_a_failing_call_fails_its_requests_and_the_next_batch_runs() -> None:
    model = SlowModel()
    model.fail = True
    batcher = BatchingEmbedder(model, max_batch=64)
    doomed = [asyncio.ensure_future(batcher.embed([t])) for t in ("a", "b")]
    await asyncio.sleep(0.01)
    model.gate.set()
    for request in doomed:
        with pytest.raises(EmbeddingError):
            await request
    model.fail = False
    assert (await batcher.embed(["c"])).shape == (1, 16)
    await batcher.close()
    with pytest.raises(EmbeddingError):
        await batcher.embed(["d"])
