"""The absolute relevance beside the fused score (service/memories/relevance.py): the
same meaning for every query, so min_relevance can leave nothing when nothing is
relevant, while the fused score of a query's best candidate is always 1."""

from __future__ import annotations

import numpy as np
import pytest

from memoryd.config import RecallSettings
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.models import MemoryFilter
from memoryd.domain.requests import MemoryDraft, RecallQuery
from memoryd.model_catalog import profile_of
from memoryd.service.memories.relevance import absolute_relevance, coverage, query_terms
from tests.unit.recall.conftest import DIM, MakeRig, scope_for, unit, with_cosine

CALIBRATION = profile_of("minilm").relevance
QUERY = unit(np.eye(DIM)[0] + 0.1)


def test_relevance_grows_with_the_cosine_and_the_query_terms_held() -> None:
    terms = query_terms("which city did Kate move to?")
    assert terms == {"citi", "kate", "move"}
    assert coverage(terms, "Kate moved to Lisbon last year") == pytest.approx(2 / 3)
    assert coverage(frozenset(), "anything") == 0.0
    low, high = (absolute_relevance(CALIBRATION, c, 0.0) for c in (0.1, 0.8))
    assert 0.0 < low < high < 1.0
    assert absolute_relevance(CALIBRATION, 0.5, 1.0) > absolute_relevance(CALIBRATION, 0.5, 0.0)
    assert absolute_relevance(CALIBRATION, -1e9, 0.0) == 0.0  # no overflow either way
    assert absolute_relevance(CALIBRATION, 1e9, 1.0) == 1.0


async def test_min_relevance_leaves_nothing_when_nothing_matches(make_rig: MakeRig) -> None:
    rig = await make_rig(RecallSettings(hybrid_default=False))
    scope = scope_for()
    cosines = {"a distant memory": 0.05, "a closer memory": 0.2, "the matching memory": 0.9}
    await rig.service.remember_batch(
        scope,
        [
            MemoryDraft(content=text, embedding=with_cosine(QUERY, c, seed=i))
            for i, (text, c) in enumerate(cosines.items())
        ],
    )

    def ask(**fields: object) -> RecallQuery:
        return RecallQuery(query="matching", embedding=QUERY, filter=MemoryFilter(), **fields)  # type: ignore[arg-type]

    every = (await rig.service.recall(scope, ask())).results
    assert [r.memory.content for r in every] == list(reversed(cosines))
    expected = [
        absolute_relevance(
            CALIBRATION,
            cosines[r.memory.content],
            coverage(query_terms("matching"), r.memory.content),
        )
        for r in every
    ]
    assert [r.relevance for r in every] == pytest.approx(expected)
    assert all(0.0 <= r.relevance <= 1.0 for r in every)

    kept = (await rig.service.recall(scope, ask(min_relevance=0.5))).results
    assert [r.memory.content for r in kept] == ["the matching memory"]
    # Asked where only the unrelated memories are, the best of them still ranks first
    # (score 1 by construction of the ranking) but nothing passes the threshold.
    await rig.service.forget(scope, [every[0].memory.id])
    rest = (await rig.service.recall(scope, ask())).results
    assert rest and all(r.relevance < 0.5 for r in rest)
    assert (await rig.service.recall(scope, ask(min_relevance=0.5))).results == []


async def test_hybrid_results_carry_the_relevance_and_min_relevance_is_checked(
    make_rig: MakeRig,
) -> None:
    rig = await make_rig()
    scope = scope_for()
    await rig.service.remember(scope, MemoryDraft(content="the user is allergic to peanuts"))
    found = (await rig.service.recall(scope, RecallQuery(query="is the user vegetarian?"))).results
    assert found and found[0].components.relevance == 1.0  # the fused scale: best = 1
    assert 0.0 <= found[0].relevance < 1.0
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(InvalidArgument) as err:
            await rig.service.recall(scope, RecallQuery(query="x", min_relevance=bad))
        assert [v.field for v in err.value.violations] == ["min_relevance"]
