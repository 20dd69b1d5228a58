"""Reciprocal rank fusion: properties that must hold for any rankings."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoryd.service.memories.hybrid import fused_order, max_fused, rrf

_ranking = st.lists(st.integers(0, 40), unique=True, max_size=30)
_k = st.floats(0.5, 200, allow_nan=False)


@given(ranking=_ranking, copies=st.integers(1, 4), k=_k)
def test_fusing_identical_rankings_preserves_their_order(
    ranking: list[int], copies: int, k: float
) -> None:
    fused = rrf([ranking] * copies, k=k)
    assert fused_order(fused) == ranking


@given(ranking=_ranking, k=_k, weight=st.floats(0.01, 10))
def test_scores_fall_strictly_with_rank(ranking: list[int], k: float, weight: float) -> None:
    fused = rrf([ranking], k=k, weights=[weight])
    scores = [fused[item] for item in ranking]
    assert all(a > b for a, b in itertools.pairwise(scores))
    assert all(s > 0 for s in scores)


@given(a=_ranking, b=_ranking, k=_k)
def test_an_item_never_loses_to_one_it_beats_everywhere(
    a: list[int], b: list[int], k: float
) -> None:
    fused = rrf([a, b], k=k)
    for x in fused:
        for y in fused:
            # x is ahead of y in every ranking that has y (and may be in others too)
            if all(x in r and r.index(x) < r.index(y) for r in (a, b) if y in r):
                assert fused[x] >= fused[y]


@given(a=_ranking, b=_ranking, k=_k, wa=st.floats(0, 5), wb=st.floats(0.01, 5))
def test_scores_are_bounded_by_first_place_everywhere(
    a: list[int], b: list[int], k: float, wa: float, wb: float
) -> None:
    fused = rrf([a, b], k=k, weights=[wa, wb])
    top = max_fused([wa, wb], k)
    assert all(0 <= s <= top * (1 + 1e-12) for s in fused.values())
    if a and b and a[0] == b[0]:
        assert fused[a[0]] == pytest.approx(top)


def test_known_values_and_union() -> None:
    fused = rrf([["x", "y"], ["y", "z"]], k=60)
    assert fused["y"] == pytest.approx(1 / 62 + 1 / 61)
    assert fused["x"] == pytest.approx(1 / 61)
    assert fused["z"] == pytest.approx(1 / 62)
    assert fused_order(fused) == ["y", "x", "z"]


def test_zero_weight_ranking_only_adds_zero() -> None:
    fused = rrf([["a", "b"], ["b", "c"]], weights=[0.0, 1.0])
    assert fused["a"] == 0.0
    assert fused_order(fused)[:2] == ["b", "c"]


def test_ties_break_by_tiebreak_then_key() -> None:
    fused = {"p": 0.5, "q": 0.5, "r": 0.5}
    assert fused_order(fused, {"q": 0.9, "r": 0.1}) == ["q", "r", "p"]
    assert fused_order(fused) == ["p", "q", "r"]


def test_rejects_bad_parameters() -> None:
    with pytest.raises(ValueError, match="k must be positive"):
        rrf([["a"]], k=0)
    with pytest.raises(ValueError, match="one weight per ranking"):
        rrf([["a"], ["b"]], weights=[1.0])
