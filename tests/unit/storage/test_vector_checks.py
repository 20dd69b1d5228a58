"""The vector checks every write and search passes through: a fast path for ordinary
vectors must give the same answers as the element-wise definition."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from memoryd.domain.models import finite_nonzero, unit_queries, unit_query
from memoryd.text import content_hash
from memoryd.text.normalize import _hash

DIM = 8


def _definition(vector: np.ndarray) -> bool:
    return bool(np.all(np.isfinite(vector)) and np.any(vector))


@given(
    hnp.arrays(
        np.float32,
        DIM,
        elements=st.floats(width=32, allow_nan=True, allow_infinity=True),
    )
)
def test_finite_nonzero_matches_its_definition(vector: np.ndarray) -> None:
    assert finite_nonzero(vector) == _definition(vector)


@pytest.mark.parametrize(
    ("vector", "expected"),
    [
        (np.full(DIM, 1e30, dtype=np.float32), True),  # squares overflow, values finite
        (np.full(DIM, 1e-30, dtype=np.float32), True),  # squares underflow to 0
        (np.zeros(DIM, dtype=np.float32), False),
        (np.array([0, 0, np.nan, 0, 0, 0, 0, 0], dtype=np.float32), False),
        (np.array([1, -np.inf, 0, 0, 0, 0, 0, 0], dtype=np.float32), False),
        (np.full(DIM, 1e200), True),  # float64: the element-wise check
        (np.zeros(DIM), False),
    ],
)
def test_finite_nonzero_edges(vector: np.ndarray, expected: bool) -> None:
    assert finite_nonzero(vector) is expected


def test_unit_queries_scales_each_row_like_one_query_at_a_time() -> None:
    rng = np.random.default_rng(1)
    queries = [rng.standard_normal(DIM).astype(np.float32) * s for s in (1e-30, 1, 50, 1e30)]
    rows = unit_queries(queries, DIM)
    assert len(rows) == 4
    for row, query in zip(rows, queries, strict=True):
        assert row.dtype == np.float32 and row.shape == (DIM,)
        wide = query.astype(np.float64)
        np.testing.assert_allclose(row, wide / np.linalg.norm(wide), rtol=1e-6)
        np.testing.assert_array_equal(unit_query(query, DIM), row)
    assert unit_queries([], DIM) == []


@pytest.mark.parametrize(
    "bad",
    [
        np.zeros(DIM, dtype=np.float32),
        np.full(DIM, np.nan, dtype=np.float32),
        np.full(DIM, np.inf, dtype=np.float32),
        np.ones(DIM + 1, dtype=np.float32),
    ],
)
def test_unit_queries_rejects_a_bad_query_in_a_batch_as_alone(bad: np.ndarray) -> None:
    good = np.ones(DIM, dtype=np.float32)
    with pytest.raises(ValueError, match="query vector"):
        unit_query(bad, DIM)
    with pytest.raises(ValueError, match="query vector"):
        unit_queries([good, bad], DIM)
    with pytest.raises(ValueError, match="query vector is missing"):
        unit_queries([good, None], DIM)


def test_content_hash_is_the_same_for_short_and_long_texts_cached_or_not() -> None:
    for text in ("Hello  World", "\uff28\uff25\uff2c\uff2c\uff2f world", "x" * 5000):
        assert content_hash(text) == _hash(text)
        assert content_hash(text) == content_hash(text.upper())
    assert content_hash("a") != content_hash("b")
