"""The layered-memory design's scoring (seed 001, §2.3 and §4.1): the default recall
weighs recency (from the last access, else the last update) and importance into the
relevance (the blended preset), and the document's own formula is the layered preset.
"Now" is the service's injected clock, or the time the question is asked."""

from __future__ import annotations

import math
from datetime import datetime, timedelta

import numpy as np
import pytest

from memoryd.config import RecallSettings
from memoryd.domain.models import Memory
from memoryd.domain.requests import MemoryDraft, RecallQuery, Scoring, ScoringPreset
from memoryd.service.memories.scoring import Scorer
from tests.clock import INSTANTS, SteppingClock

from .conftest import MakeRig, scope_for, unit, with_cosine

S = scope_for()
DEFAULTS = RecallSettings()


def memory(now: datetime, *, age: timedelta, accessed: timedelta | None = None) -> Memory:
    return Memory(
        id="m",
        tenant_id="t",
        agent_id="a",
        content="x",
        importance=0.7,
        created_at=now - age,
        updated_at=now - age,
        accessed_at=None if accessed is None else now - accessed,
    )


@pytest.mark.parametrize("now", INSTANTS)
def test_the_layered_preset_is_the_documents_formula(now: datetime) -> None:
    layered = Scorer.resolve(Scoring(preset=ScoringPreset.LAYERED), DEFAULTS)
    # Never accessed: the days count from creation; whole days, as timedelta.days.
    never = memory(now, age=timedelta(days=60, hours=20))
    score, parts = layered.score(never, relevance=0.3, now=now, cosine=0.8)
    assert parts.recency == pytest.approx(math.exp(-60 / 30))
    assert score == pytest.approx(0.6 * 0.8 + 0.2 * math.exp(-2) + 0.2 * 0.7)
    # Accessed 10.5 days ago: 10 days since the last access.
    read = memory(now, age=timedelta(days=60), accessed=timedelta(days=10, hours=12))
    score, parts = layered.score(read, relevance=0.3, now=now, cosine=0.8)
    assert parts.recency == pytest.approx(math.exp(-10 / 30))
    assert score == pytest.approx(0.6 * 0.8 + 0.2 * math.exp(-1 / 3) + 0.2 * 0.7)


@pytest.mark.parametrize("now", INSTANTS)
def test_blended_recency_counts_from_the_last_access_not_one_after_now(now: datetime) -> None:
    blended = Scorer.resolve(Scoring(), DEFAULTS)
    assert blended.preset is ScoringPreset.BLENDED  # the default
    r, i = DEFAULTS.blend_recency_weight, DEFAULTS.blend_importance_weight
    assert r > 0 and i > 0 and r + i < 0.5  # relevance still leads
    old = memory(now, age=timedelta(days=60))
    score, parts = blended.score(old, relevance=0.8, now=now)
    assert parts.recency == pytest.approx(math.exp(-60 / DEFAULTS.blend_decay_days))
    assert score == pytest.approx((1 - r - i) * 0.8 + r * parts.recency + i * 0.7)
    used = memory(now, age=timedelta(days=60), accessed=timedelta(days=3))
    assert blended.recency(used, now) == pytest.approx(math.exp(-3 / DEFAULTS.blend_decay_days))
    # Read after the time the question is asked: not yet read then.
    later = memory(now, age=timedelta(days=60), accessed=-timedelta(days=1))
    assert blended.recency(later, now) == pytest.approx(parts.recency)


def test_the_default_preset_is_a_setting() -> None:
    relevance = RecallSettings(default_preset="relevance")
    assert Scorer.resolve(Scoring(), relevance).preset is ScoringPreset.RELEVANCE
    with pytest.raises(ValueError, match="blend_recency_weight"):
        RecallSettings(blend_recency_weight=0.6, blend_importance_weight=0.6)


@pytest.mark.parametrize("now", INSTANTS)
async def test_a_60_day_old_memory_no_longer_ranks_as_if_new(
    make_rig: MakeRig, now: datetime
) -> None:
    clock = SteppingClock(now)
    rig = await make_rig(clock=clock)
    query = unit(np.random.default_rng(7).normal(size=64))
    old = await rig.service.remember(
        S,
        MemoryDraft(
            "The deadline is Friday",
            embedding=with_cosine(query, 0.80, seed=1),
            created_at=now - timedelta(days=60),
        ),
    )
    new = await rig.service.remember(
        S, MemoryDraft("The deadline is Monday", embedding=with_cosine(query, 0.78, seed=2))
    )
    ask = RecallQuery(query="", embedding=query, hybrid=False, limit=2)
    found = await rig.service.recall(S, ask)
    assert [r.memory.id for r in found.results] == [new.memory.id, old.memory.id]
    # Relevance alone (the default before) ranks the closer, older one first.
    relevance = RecallQuery(
        query="",
        embedding=query,
        hybrid=False,
        limit=2,
        scoring=Scoring(preset=ScoringPreset.RELEVANCE),
    )
    found = await rig.service.recall(S, relevance)
    assert [r.memory.id for r in found.results] == [old.memory.id, new.memory.id]
    # Asked 60 days ago (RecallQuery.now), the older memory was new then.
    back_then = RecallQuery(
        query="", embedding=query, hybrid=False, limit=2, now=now - timedelta(days=59)
    )
    found = await rig.service.recall(S, back_then)
    assert found.results[0].memory.id == old.memory.id


@pytest.mark.parametrize("now", INSTANTS)
async def test_importance_lifts_an_important_memory(make_rig: MakeRig, now: datetime) -> None:
    rig = await make_rig(clock=SteppingClock(now))
    query = unit(np.random.default_rng(8).normal(size=64))
    minor = await rig.service.remember(
        S, MemoryDraft("minor", embedding=with_cosine(query, 0.80, seed=1), importance=0.1)
    )
    major = await rig.service.remember(
        S, MemoryDraft("major", embedding=with_cosine(query, 0.79, seed=2), importance=0.9)
    )
    found = await rig.service.recall(S, RecallQuery(query="", embedding=query, hybrid=False))
    assert [r.memory.id for r in found.results] == [major.memory.id, minor.memory.id]
