"""Recall scoring: the presets of DESIGN §2, every component returned.

``relevance`` is how well a memory matches the query on a 0..1 scale: the cosine in
vector-only recall, the fused rank score over its maximum in hybrid recall. RELEVANCE
(the default) returns it, SIMILARITY returns the cosine (and orders by it), DECAYED
multiplies relevance by recency, WEIGHTED mixes relevance, recency and importance; the
components always say exactly what the score was made of.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime

from memoryd.config import RecallSettings
from memoryd.domain.models import Memory
from memoryd.domain.requests import RecencyBasis, ScoreComponents, Scoring, ScoringPreset

_LN2 = math.log(2.0)


@dataclass(frozen=True, slots=True)
class Scorer:
    """Resolved scoring parameters for one recall (request overrides over config)."""

    preset: ScoringPreset
    half_life_hours: float
    similarity_weight: float
    recency_weight: float
    importance_weight: float
    recency_basis: RecencyBasis = RecencyBasis.UPDATED

    @classmethod
    def resolve(cls, scoring: Scoring, defaults: RecallSettings) -> Scorer:
        def pick(value: float | None, default: float) -> float:
            return default if value is None else value

        return cls(
            preset=scoring.preset,
            half_life_hours=pick(scoring.half_life_hours, defaults.half_life_hours),
            similarity_weight=pick(scoring.similarity_weight, defaults.similarity_weight),
            recency_weight=pick(scoring.recency_weight, defaults.recency_weight),
            importance_weight=pick(scoring.importance_weight, defaults.importance_weight),
            recency_basis=scoring.recency_basis or RecencyBasis(defaults.recency_basis),
        )

    def reranks(self, *, hybrid: bool) -> bool:
        """Whether the final order can differ from the order candidates come in (hybrid:
        by relevance; vector-only: by cosine, which is then the relevance too)."""
        if self.preset is ScoringPreset.SIMILARITY:
            return hybrid
        return self.preset is not ScoringPreset.RELEVANCE

    def recency(self, memory: Memory, now: datetime) -> float:
        last = memory.updated_at
        if self.recency_basis is RecencyBasis.LAST_ACCESS and memory.accessed_at is not None:
            last = max(last, memory.accessed_at)
        age_hours = max(0.0, (now - last).total_seconds() / 3600.0)
        return math.exp(-_LN2 * age_hours / self.half_life_hours)

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
        final = {
            ScoringPreset.RELEVANCE: relevance,
            ScoringPreset.SIMILARITY: similarity,
            ScoringPreset.DECAYED: decayed,
            ScoringPreset.WEIGHTED: weighted,
        }[self.preset]
        return final, components
