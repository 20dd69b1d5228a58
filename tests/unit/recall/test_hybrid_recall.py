"""Hybrid recall through MemoryService: fusion, components, presets, filters."""

from __future__ import annotations

import asyncio
import math
from collections.abc import Sequence

import numpy as np
import numpy.typing as npt
import pytest

from memoryd.config import RecallSettings
from memoryd.domain.errors import EmbeddingError
from memoryd.domain.models import MemoryFilter, Partition, SecurityLevel, TextHit
from memoryd.domain.requests import MemoryDraft, RecallQuery, Scoring, ScoringPreset
from memoryd.embedding import HashingEmbedder
from memoryd.embedding.base import EmbedKind
from memoryd.service.memories.hybrid import max_fused
from memoryd.storage.memory import InMemoryStore

from .conftest import DIM, MakeRig, Rig, scope_for, unit, with_cosine

S = scope_for()
RNG = np.random.default_rng(42)


def rand() -> np.ndarray:  # type: ignore[type-arg]
    return unit(RNG.normal(size=DIM))


async def seed_with_code(rig: Rig) -> tuple[np.ndarray, str]:  # type: ignore[type-arg]
    """20 filler memories near the query vector and one holding a product code far
    from it: vector search alone never ranks the code's memory in the top 5."""
    query = rand()
    fillers = [
        MemoryDraft(f"filler note number {i}", embedding=unit(query + 0.3 * rand()))
        for i in range(20)
    ]
    await rig.service.remember_batch(S, fillers)
    far = unit(-query + 0.1 * rand())
    code = await rig.service.remember(
        S, MemoryDraft("Shipment XJ-4471 left the Berlin depot", embedding=far)
    )
    return query, code.memory.id


# These tests check the fusion's scores, which the relevance preset returns as the
# score (the default preset, blended, mixes recency and importance in).
RRF = RecallSettings(default_preset="relevance", fusion="rrf")


@pytest.fixture
async def rig(make_rig: MakeRig) -> Rig:
    return await make_rig(recall=RecallSettings(default_preset="relevance"))


@pytest.fixture
async def rrf_rig(make_rig: MakeRig) -> Rig:
    """Reciprocal rank fusion (recall.fusion: rrf), whose scores these tests compute."""
    return await make_rig(recall=RRF)


async def test_hybrid_finds_a_keyword_only_match_vector_search_misses(rrf_rig: Rig) -> None:
    rig = rrf_rig
    query, code_id = await seed_with_code(rig)
    ask = RecallQuery(query="where is XJ-4471?", embedding=query, limit=5, hybrid=False)
    vector_only = await rig.service.recall(S, ask)
    assert code_id not in [r.memory.id for r in vector_only.results]
    assert all(r.components.fused == 0 and r.components.keyword == 0 for r in vector_only.results)

    hybrid = await rig.service.recall(S, RecallQuery(**{**_fields(ask), "hybrid": True}))
    ids = [r.memory.id for r in hybrid.results]
    assert code_id in ids[:2]
    hit = hybrid.results[ids.index(code_id)]
    c = hit.components
    # First by keyword, last (21st) of the 21 vector candidates.
    w_vector, w_text = RRF.hybrid_vector_weight, RRF.hybrid_text_weight
    assert c.keyword > 0 and c.fused == pytest.approx(w_text / 61 + w_vector / 81)
    # similarity is the real cosine even though only the text search found it
    assert c.similarity == pytest.approx(
        float(np.dot(unit(query), hit_vector(rig, code_id))), abs=1e-5
    )
    assert c.similarity < 0
    # SIMILARITY preset: fused normalised to 0..1 (1 = first in both rankings)
    assert hit.score == pytest.approx(c.fused / ((w_vector + w_text) / 61))
    assert all(0 < r.score <= 1 for r in hybrid.results)
    assert [r.score for r in hybrid.results] == sorted(
        (r.score for r in hybrid.results), reverse=True
    )


def hit_vector(rig: Rig, memory_id: str) -> np.ndarray:  # type: ignore[type-arg]
    rows = rig.store._rows(S.partition)
    vec = rows[memory_id].vector
    assert vec is not None
    return vec


def _fields(q: RecallQuery) -> dict[str, object]:
    return {f: getattr(q, f) for f in q.__dataclass_fields__}


#: The default fusion weights (vector, text).
WEIGHTS = [RRF.hybrid_vector_weight, RRF.hybrid_text_weight]


@pytest.mark.parametrize("fusion", ["rrf", "convex"])
async def test_first_in_both_rankings_scores_one(make_rig: MakeRig, fusion: str) -> None:
    rig = await make_rig(recall=RecallSettings(default_preset="relevance", fusion=fusion))  # type: ignore[arg-type]
    target = rand()
    await rig.service.remember_batch(
        S,
        [
            MemoryDraft("the aurora borealis over Tromso", embedding=target),
            MemoryDraft("a quiet evening", embedding=rand()),
            MemoryDraft("nothing here", embedding=rand()),
        ],
    )
    out = await rig.service.recall(
        S, RecallQuery(query="aurora borealis", embedding=target, hybrid=True, limit=3)
    )
    top = out.results[0]
    assert top.memory.content.startswith("the aurora")
    assert top.score == pytest.approx(1.0)
    best_fused = max_fused(WEIGHTS) if fusion == "rrf" else 1.0
    assert top.components.fused == pytest.approx(best_fused)
    assert top.components.similarity == pytest.approx(1.0, abs=1e-5)


async def test_convex_fusion_mixes_scaled_cosine_and_bm25(make_rig: MakeRig) -> None:
    rig = await make_rig(
        recall=RecallSettings(
            default_preset="relevance", hybrid_vector_weight=1.0, hybrid_text_weight=3.0
        )
    )
    assert RecallSettings().fusion == "convex"
    query = rand()
    for seed, (text, cosine) in enumerate(
        [
            ("the red kayak is in the garden", 0.2),  # the keyword match, far by vector
            ("a canoe trip last summer", 0.9),
            ("boats and paddles", 0.5),
            ("an unrelated note", -0.1),
        ]
    ):
        vector = with_cosine(query, cosine, seed=seed)
        await rig.service.remember(S, MemoryDraft(text, embedding=vector))
    out = await rig.service.recall(
        S, RecallQuery(query="kayak", embedding=query, hybrid=True, limit=10)
    )
    by_text = {r.memory.content: r for r in out.results}
    low, high = -0.1, 0.9  # the cosines of the candidates, the scale's ends
    for r in out.results:
        c = r.components
        v = (c.similarity - low) / (high - low)
        t = 1.0 if c.keyword > 0 else 0.0  # one keyword match: the best one
        assert c.fused == pytest.approx((1.0 * v + 3.0 * t) / 4.0, abs=1e-5)
        assert r.score == pytest.approx(c.relevance) and c.relevance == pytest.approx(c.fused)
    # The keyword weighs three times the vector: the kayak first, by its margin.
    assert len(out.results) == 4
    assert out.results[0].memory.content == "the red kayak is in the garden"
    assert by_text["a canoe trip last summer"].components.fused == pytest.approx(0.25, abs=1e-5)


@pytest.mark.parametrize("floor", [0.0, None])
async def test_a_code_found_by_its_text_alone_beats_the_closest_vector(
    make_rig: MakeRig, floor: float | None
) -> None:
    # Convex fusion with equal weights and min-max scaling (floor 0): the only
    # full-text match sits at the lowest cosine of the candidates (0 + 0.5) and the
    # closest vector has no text match (0.5 + 0): a tie the exact match on an
    # informative term must win. With the default floor above the cosines' spread
    # (0.25 here) the farthest candidate keeps half the vector share (1 - 0.25 / 0.5):
    # no tie, and the closest vector alone still scores its full share.
    settings = (
        RecallSettings()
        if floor is None
        else RecallSettings(default_preset="relevance", convex_min_spread=floor)
    )
    rig = await make_rig(recall=settings)
    query = rand()
    for seed, (text, cosine) in enumerate(
        [
            ("The locker code for site 1 is QX001b44788", 0.2),
            ("The locker code for site 0 is QX000e5b15f", 0.45),
            ("The locker code for site 2 is QX002c10a9d", 0.3),
        ]
    ):
        await rig.service.remember(
            S, MemoryDraft(text, embedding=with_cosine(query, cosine, seed=seed))
        )
    out = await rig.service.recall(
        S, RecallQuery(query="QX001b44788", embedding=query, hybrid=True, limit=3)
    )
    top, second = out.results[:2]
    assert top.memory.content.endswith("QX001b44788") and top.components.keyword > 0
    if floor == 0.0:
        assert top.components.fused == pytest.approx(second.components.fused)
    else:
        assert second.components.fused == pytest.approx(0.5, abs=1e-5)
        assert top.components.fused == pytest.approx(0.5 * (1 - 0.25 / 0.5) + 0.5, abs=1e-5)


async def test_embedding_without_text_is_vector_only(rig: Rig) -> None:
    query, _ = await seed_with_code(rig)
    out = await rig.service.recall(S, RecallQuery(embedding=query, hybrid=True, limit=5))
    assert len(out.results) == 5
    assert all(r.components.fused == 0 for r in out.results)
    assert out.results[0].score == out.results[0].components.similarity


@pytest.mark.parametrize("default", [True, False])
async def test_hybrid_default_comes_from_config(make_rig: MakeRig, default: bool) -> None:
    rig = await make_rig(recall=RecallSettings(default_preset="relevance", hybrid_default=default))
    query, code_id = await seed_with_code(rig)
    unset = await rig.service.recall(S, RecallQuery(query="XJ-4471", embedding=query, limit=5))
    assert (code_id in [r.memory.id for r in unset.results]) is default
    for hybrid in (True, False):  # the request overrides the default either way
        out = await rig.service.recall(
            S, RecallQuery(query="XJ-4471", embedding=query, limit=5, hybrid=hybrid)
        )
        assert (code_id in [r.memory.id for r in out.results]) is hybrid


def test_hybrid_is_the_default() -> None:
    # Chosen by bench/quality.py (REALTALK recall_all@10: hybrid 0.404, vector 0.329).
    assert RecallSettings().hybrid_default is True


async def test_zero_vector_weight_ranks_by_bm25_alone(make_rig: MakeRig) -> None:
    rig = await make_rig(
        recall=RecallSettings(
            default_preset="relevance", hybrid_vector_weight=0, context_neighbours=0
        )
    )
    query, code_id = await seed_with_code(rig)
    out = await rig.service.recall(
        S, RecallQuery(query="XJ-4471 shipment", embedding=query, hybrid=True, limit=10)
    )
    # Only full-text matches, best BM25 first, first place scores 1.
    assert [r.memory.id for r in out.results] == [code_id]
    assert out.results[0].score == pytest.approx(1.0)


async def test_filters_apply_to_both_searches(rig: Rig) -> None:
    v = rand()
    await rig.service.remember_batch(
        S,
        [
            MemoryDraft("invoice 77 is paid", namespace="u1", embedding=v),
            MemoryDraft("invoice 77 is overdue", namespace="u2", embedding=v),
            MemoryDraft(
                "invoice 77 secret terms",
                namespace="u1",
                security_level=SecurityLevel.RESTRICTED,
                embedding=v,
            ),
        ],
    )
    ask = RecallQuery(
        query="invoice 77", embedding=v, hybrid=True, filter=MemoryFilter(namespace="u1")
    )
    out = await rig.service.recall(scope_for(clearance=SecurityLevel.INTERNAL), ask)
    assert [r.memory.content for r in out.results] == ["invoice 77 is paid"]
    out = await rig.service.recall(S, ask)
    assert {r.memory.content for r in out.results} == {
        "invoice 77 is paid",
        "invoice 77 secret terms",
    }


async def test_presets_apply_after_fusion(rrf_rig: Rig) -> None:
    rig = rrf_rig
    query, code_id = await seed_with_code(rig)
    base = dict(query="XJ-4471 Berlin", embedding=query, hybrid=True, limit=25)
    decayed = await rig.service.recall(
        S,
        RecallQuery(**base, scoring=Scoring(preset=ScoringPreset.DECAYED)),  # type: ignore[arg-type]
    )
    for r in decayed.results:
        relevance = r.components.relevance
        # The normalised fused score, or more for a neighbour of the best hit (raised
        # to its share of the hit's: test_context.py).
        assert relevance >= r.components.fused / max_fused(WEIGHTS) - 1e-12
        assert r.components.decayed == pytest.approx(relevance * r.components.recency)
        assert r.score == r.components.decayed
    weighted = await rig.service.recall(
        S,
        RecallQuery(**base, scoring=Scoring(preset=ScoringPreset.WEIGHTED)),  # type: ignore[arg-type]
    )
    for r in weighted.results:
        relevance = r.components.relevance
        expected = 0.6 * relevance + 0.2 * r.components.recency + 0.2 * r.components.importance
        assert r.score == pytest.approx(expected)
    assert code_id in [r.memory.id for r in weighted.results]


async def test_min_score_applies_to_the_final_score(rig: Rig) -> None:
    query, code_id = await seed_with_code(rig)
    out = await rig.service.recall(
        S, RecallQuery(query="XJ-4471", embedding=query, hybrid=True, limit=25, min_score=0.45)
    )
    assert out.results and all(r.score >= 0.45 for r in out.results)
    assert code_id in [r.memory.id for r in out.results]


async def test_chinese_query_finds_chinese_memory_with_the_hashing_embedder(rig: Rig) -> None:
    texts = [
        "金融科技精英论坛的地点是北京。",
        "银行柜员招聘会的主要内容是招聘会。",
        "模型艺术盛宴的主要内容是展示精选模型作品。",
        "户外徒步模型创作之旅开展户外徒步活动。",
    ]
    await rig.service.remember_batch(S, [MemoryDraft(t) for t in texts])
    for question, expected in [
        ("金融科技精英论坛在哪里举行\uff1f", texts[0]),
        ("招聘会的内容是什么", texts[1]),
        ("户外徒步", texts[3]),
    ]:
        out = await rig.service.recall(S, RecallQuery(query=question, hybrid=True, limit=4))
        assert out.results[0].memory.content == expected, question
        assert out.results[0].components.keyword > 0
        assert math.isfinite(out.results[0].components.similarity)


class GatedEmbedder(HashingEmbedder):
    """Embeds a query only once ``release`` is set, or fails then when ``fail``."""

    def __init__(self, fail: bool = False) -> None:
        super().__init__(DIM)
        self.release = asyncio.Event()
        self.fail = fail

    async def embed(
        self, texts: Sequence[str], *, kind: EmbedKind = "document"
    ) -> npt.NDArray[np.float32]:
        if kind == "query":
            await self.release.wait()
            if self.fail:
                raise EmbeddingError("the provider is down")
        return await super().embed(texts, kind=kind)


class WatchedStore(InMemoryStore):
    """Records when full-text searches start and end, and whether one was cancelled."""

    def __init__(self) -> None:
        super().__init__(dimension=DIM)
        self.text_started = asyncio.Event()
        #: Cleared: text searches wait until it is set.
        self.text_gate = asyncio.Event()
        self.text_gate.set()
        self.text_cancelled = asyncio.Event()

    async def text_search(
        self, partition: Partition, query: str, flt: MemoryFilter, limit: int
    ) -> list[TextHit]:
        self.text_started.set()
        try:
            await self.text_gate.wait()
        except asyncio.CancelledError:
            self.text_cancelled.set()
            raise
        return await super().text_search(partition, query, flt, limit)


async def test_the_keyword_search_runs_while_the_query_is_embedded(make_rig: MakeRig) -> None:
    embedder, store = GatedEmbedder(), WatchedStore()
    rig = await make_rig(embedder=embedder, store=store)
    await rig.service.remember(S, MemoryDraft("Shipment XJ-4471 left the Berlin depot"))
    recall = asyncio.create_task(rig.service.recall(S, RecallQuery(query="XJ-4471", hybrid=True)))
    # The text search starts before the model has answered...
    await asyncio.wait_for(store.text_started.wait(), 5)
    assert not recall.done()
    embedder.release.set()
    # ...and its hits are part of the answer.
    outcome = await asyncio.wait_for(recall, 5)
    assert [r.memory.content for r in outcome.results] == ["Shipment XJ-4471 left the Berlin depot"]
    assert outcome.results[0].components.keyword > 0


async def test_a_failed_embedding_cancels_the_keyword_search(make_rig: MakeRig) -> None:
    embedder, store = GatedEmbedder(fail=True), WatchedStore()
    rig = await make_rig(embedder=embedder, store=store)
    store.text_gate.clear()
    recall = asyncio.create_task(rig.service.recall(S, RecallQuery(query="XJ-4471", hybrid=True)))
    await asyncio.wait_for(store.text_started.wait(), 5)
    embedder.release.set()
    with pytest.raises(EmbeddingError):
        await asyncio.wait_for(recall, 5)
    await asyncio.wait_for(store.text_cancelled.wait(), 5)


async def test_a_cosine_spread_floor_keeps_a_narrow_spread_from_outweighing_text(
    make_rig: MakeRig,
) -> None:
    # Cosines 0.32..0.38: min-max scaling stretches them to 0..1, so the closest vector
    # (no keyword) ties the only keyword match at the lowest cosine. Scaled by at least
    # 0.2 the farthest keeps 0.7 of the vector share and the keyword match wins outright.
    rows = [("Kate sold her old kayak", 0.32), ("a trip to the lake", 0.38), ("boats", 0.35)]
    for floor, winner in ((0.0, None), (0.2, "Kate sold her old kayak")):
        rig = await make_rig(
            recall=RecallSettings(default_preset="relevance", convex_min_spread=floor)
        )
        query = rand()
        for seed, (text, cosine) in enumerate(rows):
            vector = with_cosine(query, cosine, seed=seed)
            await rig.service.remember(S, MemoryDraft(text, embedding=vector))
        out = await rig.service.recall(S, RecallQuery(query="kayak", embedding=query, limit=3))
        fused = {r.memory.content: r.components.fused for r in out.results}
        if winner is None:
            assert fused["Kate sold her old kayak"] == pytest.approx(fused["a trip to the lake"])
        else:
            assert out.results[0].memory.content == winner
            assert fused["a trip to the lake"] == pytest.approx(0.5, abs=1e-5)
            assert fused[winner] == pytest.approx(0.5 * (1 - 0.06 / 0.2) + 0.5, abs=1e-5)


async def test_a_lone_close_match_is_not_scored_zero(make_rig: MakeRig) -> None:
    # The spread floor scaled a single candidate's cosine to 0 (low == high), so the
    # only memory, a near-exact match, came back with score 0 (found by the Python
    # client's end-to-end test).
    rig = await make_rig(recall=RecallSettings(default_preset="relevance"))
    query = rand()
    await rig.service.remember(
        S, MemoryDraft("The user prefers green tea", embedding=with_cosine(query, 0.9, seed=1))
    )
    out = await rig.service.recall(
        S, RecallQuery(query="what does the user drink", embedding=query, hybrid=True)
    )
    assert len(out.results) == 1
    assert out.results[0].score > 0.5
