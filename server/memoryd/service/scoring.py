"""Recall scoring: the presets of DESIGN §2, every component returned."""

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

    @property
    def reranks(self) -> bool:
        """Whether the final order can differ from the similarity order."""
        return self.preset is not ScoringPreset.SIMILARITY

    def recency(self, memory: Memory, now: datetime) -> float:
        last = memory.updated_at
        if self.recency_basis is RecencyBasis.LAST_ACCESS and memory.accessed_at is not None:
            last = max(last, memory.accessed_at)
        age_hours = max(0.0, (now - last).total_seconds() / 3600.0)
        return math.exp(-_LN2 * age_hours / self.half_life_hours)

    def score(
        self,
        memory: Memory,
        similarity: float,
        now: datetime,
        *,
        keyword: float = 0.0,
        fused: float = 0.0,
        cosine: float | None = None,
    ) -> tuple[float, ScoreComponents]:
        """The preset's score and every component. ``similarity`` is what the presets
        use (hybrid recall: the normalised fused score); ``cosine``, when given, is the
        similarity reported among the components."""
        recency = self.recency(memory, now)
        decayed = similarity * recency
        weighted = (
            self.similarity_weight * similarity
            + self.recency_weight * recency
            + self.importance_weight * memory.importance
        )
        components = ScoreComponents(
            similarity=similarity if cosine is None else cosine,
            recency=recency,
            importance=memory.importance,
            decayed=decayed,
            weighted=weighted,
            keyword=keyword,
            fused=fused,
        )
        final = {
            ScoringPreset.SIMILARITY: similarity,
            ScoringPreset.DECAYED: decayed,
            ScoringPreset.WEIGHTED: weighted,
        }[self.preset]
        return final, components
