"""Inputs and outputs of the memory service, independent of the wire format."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from memoryd.domain.as_of import AsOf
from memoryd.domain.models import (
    Memory,
    MemoryFilter,
    MemoryOrder,
    MemoryType,
    Provenance,
    SecurityLevel,
    Vector,
)


@dataclass(frozen=True, slots=True)
class MemoryDraft:
    """What a caller asks to remember. ``None`` fields take server defaults."""

    content: str
    memory_type: MemoryType = MemoryType.FACT
    tags: tuple[str, ...] = ()
    security_level: SecurityLevel | None = None
    importance: float | None = None
    confidence: float | None = None
    namespace: str = ""
    metadata: dict[str, Any] = field(default_factory=dict)
    source: Provenance | None = None
    expires_at: datetime | None = None
    created_at: datetime | None = None
    #: Event time (Memory.occurred_at); may lie in the future (a planned event).
    occurred_at: datetime | None = None
    embedding: Vector | None = None
    #: ``metadata`` as the writer's JSON text (whitespace between tokens removed),
    #: kept as written; "" when it came as a value.
    metadata_json: str = ""
    #: The conversation (session, thread) the memory comes from and its turn number
    #: there ("" and 0: none), kept in metadata (domain/conversation.py): Recall's
    #: context expansion adds a hit's neighbours in its session by them.
    session_id: str = ""
    sequence: int = 0


@dataclass(frozen=True, slots=True)
class RememberOutcome:
    """A Remember's memory, and whether it updated a near-duplicate."""

    memory: Memory
    deduplicated: bool = False


class RecencyBasis(enum.StrEnum):
    """What recency counts from: the last update, or the last access or update."""

    UPDATED = "updated"
    LAST_ACCESS = "last_access"


class ScoringPreset(enum.StrEnum):
    """How Recall ranks what it found."""

    #: How well the memory matches the query, 0..1 (hybrid: the normalised fused
    #: rank score; vector-only: the cosine). The default.
    RELEVANCE = "relevance"
    #: The cosine of query and memory vectors, and the order by it.
    SIMILARITY = "similarity"
    DECAYED = "decayed"
    WEIGHTED = "weighted"
    #: The server's default (recall.default_preset): relevance, with recency (from the
    #: last access, else the last update) and importance mixed in at the measured
    #: weights recall.blend_recency_weight / recall.blend_importance_weight.
    BLENDED = "blended"
    #: The layered-memory design document's score, exactly: 0.6 * cosine + 0.2 *
    #: exp(-whole days since the last access (else creation) / 30) + 0.2 * importance.
    LAYERED = "layered"


@dataclass(frozen=True, slots=True)
class Scoring:
    """A Recall's scoring: the preset and per-request overrides of its weights."""

    #: None: the server's default (recall.default_preset).
    preset: ScoringPreset | None = None
    half_life_hours: float | None = None
    similarity_weight: float | None = None
    recency_weight: float | None = None
    importance_weight: float | None = None
    #: None: the server default (recall.recency_basis).
    recency_basis: RecencyBasis | None = None


@dataclass(frozen=True, slots=True)
class ScoreComponents:
    """Every component of a recall score, returned with each result."""

    similarity: float = 0.0
    recency: float = 0.0
    importance: float = 0.0
    decayed: float = 0.0
    weighted: float = 0.0
    keyword: float = 0.0
    fused: float = 0.0
    relevance: float = 0.0
    #: 1 when the memory's event time falls in a time the query names, else 0.
    temporal: float = 0.0


@dataclass(frozen=True, slots=True)
class RecallQuery:
    """What Recall searches for: text or a vector, filters, limit, scoring and when it is asked."""

    query: str = ""
    embedding: Vector | None = None
    limit: int | None = None
    filter: MemoryFilter = field(default_factory=MemoryFilter)
    scoring: Scoring = field(default_factory=Scoring)
    hybrid: bool | None = None
    #: None: no threshold (the wire's 0 means unset).
    min_score: float | None = None
    #: Drop results whose absolute relevance (ScoredMemory.relevance) is below this;
    #: None: no threshold (the wire's 0 means unset).
    min_relevance: float | None = None
    #: The reference time of relative time expressions in the query; None: the clock.
    now: datetime | None = None
    #: Context expansion (service/memories/context.py): the turns this many steps
    #: either side of the best hits, from the same session, join the results; None:
    #: the server's recall.context_neighbours, 0: off.
    context_window: int | None = None
    #: Recall as of a past moment (docs/as-of.md); None: now.
    as_of: AsOf | None = None


@dataclass(frozen=True, slots=True)
class ScoredMemory:
    """One recall result: the memory, its score and the score's components."""

    memory: Memory
    score: float
    components: ScoreComponents
    #: How well the memory matches the query, 0..1, the same meaning for every query
    #: (service/memories/relevance.py); ``components.relevance`` ranks within one.
    relevance: float = 0.0


@dataclass(frozen=True, slots=True)
class Degradation:
    """One fallback a call was served by: the component and why."""

    component: str
    reason: str


@dataclass(frozen=True, slots=True)
class RecallOutcome:
    """Recall's results, the embedding model that ranked them and its degradations."""

    results: list[ScoredMemory]
    embedding_model: str
    degraded: tuple[Degradation, ...] = ()


@dataclass(frozen=True, slots=True)
class ListQuery:
    """What ListMemories lists: a filter, an order and a page."""

    filter: MemoryFilter = field(default_factory=MemoryFilter)
    order: MemoryOrder = MemoryOrder.CREATED_DESC
    page_size: int | None = None
    page_token: str = ""


@dataclass(frozen=True, slots=True)
class MemoryPage:
    """A page of memories."""

    memories: list[Memory]
    next_page_token: str = ""


#: Fields UpdateMemory may replace (names match the wire's update_mask paths).
UPDATABLE_FIELDS = frozenset(
    {
        "content",
        "memory_type",
        "tags",
        "security_level",
        "importance",
        "confidence",
        "namespace",
        "metadata",
        "source",
        "expires_at",
        "archived",
        "occurred_at",
    }
)


@dataclass(frozen=True, slots=True)
class MemoryPatch:
    """New values for the fields named in ``fields`` (a subset of UPDATABLE_FIELDS)."""

    fields: frozenset[str]
    values: dict[str, Any]
    if_version: int | None = None
    embedding: Vector | None = None
    #: The new metadata as the writer's JSON text ("" when it came as a value).
    metadata_json: str = ""
