"""Domain objects for long-term memories: what services and stores exchange."""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NewType

import numpy as np
import numpy.typing as npt

from memoryd.domain.json_text import spelled

Vector = npt.NDArray[np.float32]


def finite_nonzero(vector: npt.NDArray[Any]) -> bool:
    """Whether every component is finite and one is not zero. For float32 (every
    vector the daemon keeps) one float64 dot product answers exactly, since the
    squares neither overflow nor underflow: ~1 us against ~4 for the two reductions,
    and a batch of a thousand memories checks each vector three times."""
    if vector.dtype == np.float32:
        wide = vector.astype(np.float64)
        square = float(wide @ wide)
        return math.isfinite(square) and square > 0
    return bool(np.isfinite(vector).all() and vector.any())


def unit_rows(vectors: npt.ArrayLike) -> npt.NDArray[np.float32]:
    """``vectors`` (one, or a matrix of rows) scaled to unit length, as float32; a zero
    row stays zero. The norms are taken in float64: in float32 the norm of a valid
    vector underflows to 0 (components ~1e-20) or overflows (~1e20), which turned it
    into NaNs or zeros."""
    wide = np.asarray(vectors, dtype=np.float64)
    norms = np.sqrt(np.einsum("...i,...i->...", wide, wide))[..., None]
    unit: npt.NDArray[np.float32] = (wide / np.where(norms > 0, norms, 1.0)).astype(np.float32)
    return unit


#: A query vector checked (the stores' dimension, every component finite, not all
#: zero) and scaled to unit length, by :func:`unit_query` / :func:`unit_queries`: the
#: one place either happens, where the services hand a query to the stores (the
#: embedder's output and a caller's own embedding alike). Every store layer behind
#: (the log's faces, the hot cache, the backends) trusts it: none checks or scales it
#: again, and mypy refuses a plain array where a search takes one.
UnitVector = NewType("UnitVector", npt.NDArray[np.float32])


def unit_query(vector: npt.ArrayLike, dimension: int) -> UnitVector:
    """One query vector as :func:`unit_queries` makes them."""
    return unit_queries([vector], dimension)[0]


def unit_queries(vectors: Sequence[npt.ArrayLike | None], dimension: int) -> list[UnitVector]:
    """``vectors`` checked and scaled to unit length (the rows of one float32 matrix:
    a batch's checks and norms in a few vectorised calls). Raises ValueError naming
    the first bad one: missing (a memory without its vector), of the wrong dimension,
    zero or not finite."""
    if not vectors:
        return []
    if any(vector is None for vector in vectors):
        raise ValueError("query vector is missing")
    try:
        rows = np.asarray(vectors, dtype=np.float32).reshape(len(vectors), -1)
    except ValueError:  # ragged: one of them has the wrong shape
        rows = np.zeros((len(vectors), 0), dtype=np.float32)
    # In float64 the squares of float32 values neither overflow nor underflow.
    squares = np.einsum("ij,ij->i", rows, rows, dtype=np.float64)
    if rows.shape[1] != dimension or not (np.isfinite(squares).all() and (squares > 0).all()):
        for vector in vectors:
            _check_query(vector, dimension)  # raises, naming the bad one
    unit = (rows / np.sqrt(squares)[:, None]).astype(np.float32)
    return [UnitVector(row) for row in unit]


def _check_query(vector: npt.ArrayLike | None, dimension: int) -> None:
    vec = np.asarray(vector, dtype=np.float32).reshape(-1)
    if vec.shape != (dimension,):
        raise ValueError(f"query vector has shape {vec.shape}, expected ({dimension},)")
    if not finite_nonzero(vec):
        raise ValueError("query vector is zero or not finite")


def utcnow() -> datetime:
    """The server's clock: the default :data:`Clock` of every service."""
    return datetime.now(UTC)


#: Where a service reads "now" from: ``utcnow`` in the daemon, a fixed instant in tests
#: (relative dates in a query, expiry, recency decay all depend on it).
Clock = Callable[[], datetime]


class MemoryType(enum.StrEnum):
    """What kind of thing a long-term memory holds."""

    PREFERENCE = "preference"
    FACT = "fact"
    PATTERN = "pattern"
    SKILL = "skill"
    EPISODE = "episode"


class SecurityLevel(enum.IntEnum):
    """Ordered: a caller cleared for a level sees it and every level below."""

    PUBLIC = 1
    INTERNAL = 2
    CONFIDENTIAL = 3
    RESTRICTED = 4


class ProvenanceKind(enum.StrEnum):
    """Where a memory's content came from."""

    USER = "user"
    TOOL = "tool"
    WEB = "web"
    FILE = "file"
    SYSTEM = "system"
    AGENT = "agent"


#: Kinds whose provenance must carry name, retrieved_at and locator.
PROVENANCE_REQUIRED_KINDS = frozenset(
    {ProvenanceKind.TOOL, ProvenanceKind.WEB, ProvenanceKind.FILE}
)
#: Kinds whose content reaches a prompt as quoted data with its source, never as
#: instructions: what a tool returned, a web page, a file. Nobody the agent answers to
#: vouches for their text, and it may carry instructions of its own. The other kinds
#: (user, agent, system) are stated by a party the agent answers to.
QUOTED_KINDS = PROVENANCE_REQUIRED_KINDS


class TagMatch(enum.StrEnum):
    """Whether a tag filter wants any of its tags or all of them."""

    ANY = "any"
    ALL = "all"


class MemoryOrder(enum.StrEnum):
    """The order ListMemories lists in."""

    CREATED_DESC = "created_desc"
    CREATED_ASC = "created_asc"
    #: Ordered by the service, not the store (storage lists by creation only).
    ACCESS_COUNT_DESC = "access_count_desc"
    IMPORTANCE_DESC = "importance_desc"


@dataclass(frozen=True, slots=True)
class Partition:
    """The isolation boundary: every record belongs to exactly one."""

    tenant_id: str
    agent_id: str


@dataclass(frozen=True, slots=True)
class Provenance:
    """A memory's source: its kind, a name and locator, and when it was retrieved."""

    kind: ProvenanceKind
    name: str = ""
    retrieved_at: datetime | None = None
    locator: str = ""


def is_quoted(source: Provenance | None) -> bool:
    """Whether content of this provenance is rendered as quoted data (QUOTED_KINDS)."""
    return source is not None and source.kind in QUOTED_KINDS


@dataclass(frozen=True, slots=True)
class TrustFilter:
    """Which provenance a read admits (the ``trust`` of Recall and BuildSnapshot):
    applied by every store inside its query, so a top-k or a page is filled from what
    it admits."""

    #: The provenance kinds admitted; kept unique and in ProvenanceKind's order, so
    #: equal filters are equal and spell alike (a page token's fingerprint).
    kinds: tuple[ProvenanceKind, ...]
    #: Whether memories without any provenance (remembered without a source) are
    #: admitted too.
    unattributed: bool = False

    def __post_init__(self) -> None:
        canonical = tuple(k for k in ProvenanceKind if k in self.kinds)
        object.__setattr__(self, "kinds", canonical)

    def admits(self, source: Provenance | None) -> bool:
        """Whether a memory of provenance ``source`` passes."""
        return self.unattributed if source is None else source.kind in self.kinds


@dataclass(slots=True)
class Memory:
    """A long-term memory as stored. ``vector`` is unit-length float32 (or None when
    a store returns a record without its vector)."""

    id: str
    tenant_id: str
    agent_id: str
    content: str
    created_at: datetime
    updated_at: datetime
    namespace: str = ""
    memory_type: MemoryType = MemoryType.FACT
    tags: tuple[str, ...] = ()
    security_level: SecurityLevel = SecurityLevel.INTERNAL
    importance: float = 0.5
    confidence: float = 1.0
    source: Provenance | None = None
    metadata: dict[str, Any] = field(default_factory=dict)
    accessed_at: datetime | None = None
    access_count: int = 0
    version: int = 1
    archived: bool = False
    expires_at: datetime | None = None
    key: str = ""
    embedding_model: str = ""
    embedding_dimension: int = 0
    supersedes: str = ""
    #: When what the memory is about happened (event time), if the client said;
    #: ``created_at`` is when it was learned (the bi-temporal pair).
    occurred_at: datetime | None = None
    vector: Vector | None = None
    #: The metadata as its writer's JSON text ("" when it came as a value); a spelling
    #: of ``metadata``, which stays the truth of what it holds (the daemon adds to it):
    #: see :meth:`metadata_text`. Not compared: memories are equal by value.
    metadata_json: str = field(default="", compare=False)

    @property
    def partition(self) -> Partition:
        """The (tenant, agent) partition the memory lives in."""
        return Partition(self.tenant_id, self.agent_id)

    @property
    def event_time(self) -> datetime:
        """When it happened: ``occurred_at``, else when it was learned (``created_at``)."""
        return self.occurred_at if self.occurred_at is not None else self.created_at

    def metadata_text(self) -> str:
        """The metadata as stored and returned: JSON text keeping ``metadata_json``'s
        spelling (``1.50``, ``1e2``) of every part ``metadata`` still holds as written."""
        return spelled(self.metadata, self.metadata_json)

    def copy(self) -> Memory:
        """A shallow copy a caller may set fields on. Reads copy every result out of
        the hot cache, so this is spelled out: ~0.25 us against ~1.1 for a loop over
        the fields and ~2.9 for ``dataclasses.replace`` (a test checks it copies
        every field)."""
        out = object.__new__(Memory)
        out.id = self.id
        out.tenant_id = self.tenant_id
        out.agent_id = self.agent_id
        out.content = self.content
        out.created_at = self.created_at
        out.updated_at = self.updated_at
        out.namespace = self.namespace
        out.memory_type = self.memory_type
        out.tags = self.tags
        out.security_level = self.security_level
        out.importance = self.importance
        out.confidence = self.confidence
        out.source = self.source
        out.metadata = self.metadata
        out.accessed_at = self.accessed_at
        out.access_count = self.access_count
        out.version = self.version
        out.archived = self.archived
        out.expires_at = self.expires_at
        out.key = self.key
        out.embedding_model = self.embedding_model
        out.embedding_dimension = self.embedding_dimension
        out.supersedes = self.supersedes
        out.occurred_at = self.occurred_at
        out.vector = self.vector
        out.metadata_json = self.metadata_json
        return out


@dataclass(frozen=True, slots=True)
class MemoryFilter:
    """Predicates a store applies inside its query (never after the fact in Python
    for isolation-relevant fields). Empty tuples mean "no constraint"."""

    namespace: str | None = None
    tags: tuple[str, ...] = ()
    tag_match: TagMatch = TagMatch.ANY
    memory_types: tuple[MemoryType, ...] = ()
    max_security_level: SecurityLevel = SecurityLevel.RESTRICTED
    created_after: datetime | None = None
    created_before: datetime | None = None
    include_archived: bool = False
    #: Exclude memories whose expires_at is at or before this instant.
    not_expired_at: datetime | None = None
    #: Only memories embedded by this model / not by this one: vectors of different
    #: models (the embedding fallback's space) are never compared.
    embedding_model: str | None = None
    exclude_embedding_model: str | None = None
    #: Only memories whose provenance it admits; None: any provenance.
    trust: TrustFilter | None = None


@dataclass(frozen=True, slots=True)
class PageCursor:
    """Keyset position: the (created_at, id) of the last item already returned."""

    created_at: datetime
    id: str


@dataclass(frozen=True, slots=True)
class VectorHit:
    """A memory found by vector search, with its cosine."""

    memory: Memory
    #: Cosine similarity in [-1, 1].
    similarity: float


@dataclass(frozen=True, slots=True)
class TextHit:
    """A memory found by full-text search, with its BM25 score."""

    memory: Memory
    #: BM25 relevance, > 0; comparable only within one search.
    score: float
    #: Whether the match rests on an informative query term: one held by at most
    #: COMMON_TERM_RATIO of the searched memories (see memoryd.text.informative).
    #: False when the memory shares only common words ("user" in a store about the
    #: user) with a query that has rarer ones; hybrid recall then leaves it out of
    #: the fusion. Stores that cannot tell say True.
    informative: bool = True


@dataclass(frozen=True, slots=True)
class AccessUpdate:
    """Accumulated reads of one memory, flushed in batches by the access buffer."""

    count: int
    last_accessed_at: datetime
