"""The hashing fallback: deterministic, normalised, and lexically sensible."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memoryd.domain.errors import InvalidArgument
from memoryd.embedding import HashingEmbedder


def cosine(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.dot(a, b))


async def test_deterministic_across_instances() -> None:
    texts = ["The user's dog is a beagle named Rex.", "我喜欢喝咖啡", "🙂 ok"]
    first = await HashingEmbedder(256).embed(texts)
    second = await HashingEmbedder(256).embed(texts)
    np.testing.assert_array_equal(first, second)


async def test_known_vector_is_stable() -> None:
    # Pins the hash function: vectors stored yesterday must match queries today.
    vector = (await HashingEmbedder(16).embed(["hello"]))[0]
    assert np.count_nonzero(vector) > 0
    assert HashingEmbedder(16).model_id == "hashing-v1-16"
    np.testing.assert_array_equal(vector, HashingEmbedder(16).embed_sync(["hello"])[0])


async def test_dimension_dtype_and_unit_norm() -> None:
    embedder = HashingEmbedder(384)
    vectors = await embedder.embed(["a", "The cat sat on the mat.", "明天下雨", "안녕하세요"])
    assert embedder.dimension == 384
    assert vectors.shape == (4, 384)
    assert vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)


@pytest.mark.parametrize(
    ("anchor", "similar", "unrelated"),
    [
        ("The cat sat on the mat.", "The cat is sitting on a mat.", "Stock prices fell sharply."),
        ("我喜欢喝咖啡", "我很喜欢咖啡", "明天下雨"),
        ("コーヒーが好きです", "コーヒーが大好き", "明日は雨です"),
    ],
)
async def test_similar_texts_are_closer(anchor: str, similar: str, unrelated: str) -> None:
    a, s, u = await HashingEmbedder(384).embed([anchor, similar, unrelated])
    assert cosine(a, s) > cosine(a, u) + 0.2


async def test_case_and_width_insensitive() -> None:
    fullwidth = "hello WORLD".translate({c: c + 0xFEE0 for c in range(0x21, 0x7F)})
    a, b = await HashingEmbedder(128).embed(["Hello World", fullwidth])
    np.testing.assert_allclose(a, b, atol=1e-6)


async def test_empty_and_whitespace_give_zero_vectors() -> None:
    vectors = await HashingEmbedder(64).embed(["", "  \n\t "])
    assert np.isfinite(vectors).all()
    assert not vectors.any()


async def test_rejects_bare_string() -> None:
    with pytest.raises(InvalidArgument):
        await HashingEmbedder(64).embed("not a list")


async def test_large_input_off_loop_matches_inline() -> None:
    embedder = HashingEmbedder(64)
    texts = [f"memory number {i} " * 50 for i in range(40)]  # above the inline threshold
    np.testing.assert_array_equal(await embedder.embed(texts), embedder.embed_sync(texts))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.text(), min_size=1, max_size=5))
def test_any_unicode_gives_finite_unit_or_zero_rows(texts: list[str]) -> None:
    vectors = HashingEmbedder(32).embed_sync(texts)
    assert vectors.shape == (len(texts), 32)
    assert np.isfinite(vectors).all()
    for norm in np.linalg.norm(vectors, axis=1):
        assert norm == 0.0 or abs(norm - 1.0) < 1e-5
