"""Recall scoring: the presets of DESIGN §2, every component returned.

``relevance`` is how well a memory matches the query on a 0..1 scale: the cosine in
vector-only recall, the fused rank score over its maximum in hybrid recall. RELEVANCE
returns it, SIMILARITY returns the cosine (and orders by it), DECAYED multiplies
relevance by recency, WEIGHTED mixes relevance, recency and importance; the
components always say exactly what the score was made of.

BLENDED (the default, recall.default_preset) is relevance with a little recency and
importance mixed in (the layered-memory design's idea at weights measured not to cost
retrieval quality: docs/quality.md); LAYERED is that design's formula as written,
0.6 * cosine + 0.2 * exp(-days / 30) + 0.2 * importance. Both count the days from the
last access (an access after "now", the time a question is asked, has not happened
yet then), else the last update (BLENDED) or creation (LAYERED).
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from memoryd.config import RecallSettings
from memoryd.domain.models import Memory, VectorHit
from memoryd.domain.requests import (
    RecencyBasis,
    ScoreComponents,
    ScoredMemory,
    Scoring,
    ScoringPreset,
)
from memoryd.service.memories.hybrid import Candidate
from memoryd.service.memories.temporal import TimeQuery

_LN2 = math.log(2.0)
_DAY_S = 86400.0
#: The layered-memory design document's score (seed 001, §4.1): weights of cosine,
#: recency and importance, and the days of its exponential decay.
LAYERED_WEIGHTS = (0.6, 0.2, 0.2)
LAYERED_DECAY_DAYS = 30.0
#: The presets whose recency is exp(-days / decay days) from the last access.
_BY_DAYS = frozenset({ScoringPreset.BLENDED, ScoringPreset.LAYERED})


@dataclass(frozen=True, slots=True)
class Scorer:
    """Resolved scoring parameters for one recall (request overrides over config)."""

    preset: ScoringPreset
    half_life_hours: float
    similarity_weight: float
    recency_weight: float
    importance_weight: float
    recency_basis: RecencyBasis = RecencyBasis.UPDATED
    blend_recency_weight: float = 0.0
    blend_importance_weight: float = 0.0
    blend_decay_days: float = LAYERED_DECAY_DAYS

    @classmethod
    def resolve(cls, scoring: Scoring, defaults: RecallSettings) -> Scorer:
        def pick(value: float | None, default: float) -> float:
            return default if value is None else value

        return cls(
            preset=scoring.preset or ScoringPreset(defaults.default_preset),
            half_life_hours=pick(scoring.half_life_hours, defaults.half_life_hours),
            similarity_weight=pick(scoring.similarity_weight, defaults.similarity_weight),
            recency_weight=pick(scoring.recency_weight, defaults.recency_weight),
            importance_weight=pick(scoring.importance_weight, defaults.importance_weight),
            recency_basis=scoring.recency_basis or RecencyBasis(defaults.recency_basis),
            blend_recency_weight=defaults.blend_recency_weight,
            blend_importance_weight=defaults.blend_importance_weight,
            blend_decay_days=defaults.blend_decay_days,
        )

    def reranks(self, *, hybrid: bool) -> bool:
        """Whether the final order can differ from the order candidates come in (hybrid:
        by relevance; vector-only: by cosine, which is then the relevance too)."""
        if self.preset is ScoringPreset.SIMILARITY:
            return hybrid
        return self.preset is not ScoringPreset.RELEVANCE

    def recency(self, memory: Memory, now: datetime) -> float:
        """The preset's recency of ``memory`` at ``now``, 0..1 (1: just now)."""
        accessed = memory.accessed_at
        if accessed is not None and accessed > now:
            accessed = None  # not yet accessed at the time the question is asked
        if self.preset is ScoringPreset.LAYERED:
            last = accessed or memory.created_at
            days = max(0, (now - last) // timedelta(days=1))
            return math.exp(-days / LAYERED_DECAY_DAYS)
        last = memory.updated_at
        basis = RecencyBasis.LAST_ACCESS if self.preset in _BY_DAYS else self.recency_basis
        if basis is RecencyBasis.LAST_ACCESS and accessed is not None:
            last = max(last, accessed)
        age_s = max(0.0, (now - last).total_seconds())
        if self.preset is ScoringPreset.BLENDED:
            return math.exp(-age_s / _DAY_S / self.blend_decay_days)
        return math.exp(-_LN2 * age_s / 3600.0 / self.half_life_hours)

    def _final(self, relevance: float, components: ScoreComponents) -> float:
        if self.preset is ScoringPreset.BLENDED:
            recency_w, importance_w = self.blend_recency_weight, self.blend_importance_weight
            return (
                (1.0 - recency_w - importance_w) * relevance
                + recency_w * components.recency
                + importance_w * components.importance
            )
        if self.preset is ScoringPreset.LAYERED:
            cosine_w, recency_w, importance_w = LAYERED_WEIGHTS
            return (
                cosine_w * components.similarity
                + recency_w * components.recency
                + importance_w * components.importance
            )
        return {
            ScoringPreset.RELEVANCE: relevance,
            ScoringPreset.SIMILARITY: components.similarity,
            ScoringPreset.DECAYED: components.decayed,
            ScoringPreset.WEIGHTED: components.weighted,
        }[self.preset]

    def score(
        self,
        memory: Memory,
        relevance: float,
        now: datetime,
        *,
        cosine: float | None = None,
        keyword: float = 0.0,
        fused: float = 0.0,
        temporal: float = 0.0,
    ) -> tuple[float, ScoreComponents]:
        """The preset's score and every component. ``relevance`` is what DECAYED and
        WEIGHTED build on (hybrid recall: the normalised fused score; vector-only: the
        cosine, when ``cosine`` is not given); ``cosine`` is the similarity component
        and what SIMILARITY returns."""
        similarity = relevance if cosine is None else cosine
        recency = self.recency(memory, now)
        decayed = relevance * recency
        weighted = (
            self.similarity_weight * relevance
            + self.recency_weight * recency
            + self.importance_weight * memory.importance
        )
        components = ScoreComponents(
            similarity=similarity,
            recency=recency,
            importance=memory.importance,
            decayed=decayed,
            weighted=weighted,
            keyword=keyword,
            fused=fused,
            relevance=relevance,
            temporal=temporal,
        )
        return self._final(relevance, components), components


def scored_hybrid(
    found: list[Candidate], scorer: Scorer, now: datetime, when: TimeQuery, limit: int
) -> list[ScoredMemory]:
    """Hybrid candidates (best first by relevance) scored by the preset; a query that
    names a time moves the memories of that time up first (service/memories/temporal.py)."""
    temporal = when.matches([c.memory for c in found]) if when else []
    if any(temporal):
        relevance = [when.relevance(c.relevance, t) for c, t in zip(found, temporal, strict=True)]
        order = sorted(range(len(found)), key=lambda i: -relevance[i])  # stable
        found = [dataclasses.replace(found[i], relevance=relevance[i]) for i in order]
        temporal = [temporal[i] for i in order]
    if not scorer.reranks(hybrid=True):  # the order by relevance is the final one
        found = found[:limit]
    out = []
    for i, c in enumerate(found):
        score, components = scorer.score(
            c.memory,
            c.relevance,
            now,
            cosine=c.similarity,
            keyword=c.keyword,
            fused=c.fused,
            temporal=temporal[i] if temporal else 0.0,
        )
        out.append(ScoredMemory(c.memory, score, components))
    return out


def scored_vector(
    hits: list[VectorHit], scorer: Scorer, now: datetime, when: TimeQuery
) -> list[ScoredMemory]:
    """Vector-only hits scored by the preset, relevance being the cosine (moved toward
    the memories of a time the query names, as in hybrid recall)."""
    temporal = when.matches([h.memory for h in hits]) if when else []
    if not any(temporal):
        return [ScoredMemory(h.memory, *scorer.score(h.memory, h.similarity, now)) for h in hits]
    out = []
    for hit, t in zip(hits, temporal, strict=True):
        relevance = when.relevance(hit.similarity, t)
        score, components = scorer.score(
            hit.memory, relevance, now, cosine=hit.similarity, temporal=t
        )
        out.append(ScoredMemory(hit.memory, score, components))
    return out
