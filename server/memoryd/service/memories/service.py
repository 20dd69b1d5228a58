"""Long-term memory operations: remember, recall, get, list, update, forget."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import uuid
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime

import numpy as np

from memoryd.aio import abandon
from memoryd.config import DedupSettings, LimitsSettings, RecallSettings
from memoryd.domain.errors import (
    FailedPrecondition,
    FieldViolation,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from memoryd.domain.limits import next_version
from memoryd.domain.models import (
    Clock,
    Memory,
    MemoryFilter,
    PageCursor,
    SecurityLevel,
    TextHit,
    Vector,
    VectorHit,
    unit_rows,
    utcnow,
)
from memoryd.domain.principal import CallScope
from memoryd.domain.relations import reserved
from memoryd.domain.requests import (
    ListQuery,
    MemoryDraft,
    MemoryPage,
    MemoryPatch,
    RecallOutcome,
    RecallQuery,
    RememberOutcome,
    ScoredMemory,
)
from memoryd.embedding.base import Embedder
from memoryd.resilience.embedder import embed_in_space, in_space
from memoryd.security.masking import Masker
from memoryd.service.common import validation as check
from memoryd.service.common.leases import Lease, PartitionLeases
from memoryd.service.common.pagination import PageTokenCodec, fingerprint
from memoryd.service.common.quotas import Quotas
from memoryd.service.common.validation import Violations
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.context import with_context
from memoryd.service.memories.contradiction import ContradictionResolver
from memoryd.service.memories.dedup import Deduplicator
from memoryd.service.memories.feedback import with_feedback
from memoryd.service.memories.hybrid import Candidate, hybrid_candidates
from memoryd.service.memories.ordering import ORDER_KEYS, cursor_for, ranked_page
from memoryd.service.memories.scoring import Scorer
from memoryd.service.memories.temporal import TimeQuery
from memoryd.storage.base import Store

DEFAULT_SECURITY_LEVEL = SecurityLevel.INTERNAL
DEFAULT_PAGE_SIZE = 50
#: Candidates fetched per requested result when the scoring preset can reorder them.
RERANK_FACTOR = 4
MIN_RERANK_CANDIDATES = 50


class MemoryService:
    def __init__(
        self,
        *,
        store: Store,
        embedder: Embedder,
        writer: WriteBatcher,
        access: AccessStatsBuffer,
        page_tokens: PageTokenCodec,
        limits: LimitsSettings,
        recall: RecallSettings,
        quotas: Quotas | None = None,
        dedup: DedupSettings | None = None,
        contradictions: ContradictionResolver | None = None,
        masker: Masker | None = None,
        leases: PartitionLeases | None = None,
        clock: Clock = utcnow,
    ) -> None:
        self._clock = clock
        self._masker = masker
        #: Replicas sharing the store: plans and checked updates under a partition lease.
        self._leases = leases
        self._store = store
        self._embedder = embedder
        self._writer = writer
        self._access = access
        self._page_tokens = page_tokens
        self._limits = limits
        self._recall = recall
        self._quotas = quotas
        self._dedup = Deduplicator(store, dedup or DedupSettings())
        self._contradictions = contradictions

    # ------------------------------------------------------------------ writes

    async def remember(
        self, scope: CallScope, draft: MemoryDraft, *, dedup: bool = True
    ) -> RememberOutcome:
        return (await self.remember_batch(scope, [draft], field_prefix="", dedup=dedup))[0]

    async def remember_batch(
        self,
        scope: CallScope,
        drafts: Sequence[MemoryDraft],
        *,
        field_prefix: str = "items",
        dedup: bool = True,
    ) -> list[RememberOutcome]:
        """Store ``drafts``; a duplicate of a live memory (see service/memories/dedup.py) updates
        it instead, unless ``dedup`` is False (callers that own their records' identity,
        like keyed memory, write every draft as a new memory)."""
        if not drafts:
            raise InvalidArgument.field(field_prefix or "items", "must not be empty")
        if len(drafts) > self._limits.max_batch_size:
            raise InvalidArgument.field(
                field_prefix or "items",
                f"has {len(drafts)} items; the limit is {self._limits.max_batch_size} (limits.max_batch_size)",
            )
        now = self._clock()
        violations = Violations()
        for i, draft in enumerate(drafts):
            prefix = f"{field_prefix}[{i}]." if field_prefix else ""
            violations.extend(self._draft_violations(draft, now, prefix))
        violations.raise_if_any()
        for i, draft in enumerate(drafts):
            level = draft.security_level or DEFAULT_SECURITY_LEVEL
            if level > scope.clearance:
                where = f"{field_prefix}[{i}].security_level" if field_prefix else "security_level"
                raise PermissionDenied(f"{where}: {level.name} is above the caller's clearance")

        vectors, spaces = await self._vectors_for(drafts)
        memories = [
            self._new_memory(scope, draft, vector, now, space)
            for draft, vector, space in zip(drafts, vectors, spaces, strict=True)
        ]
        if not (dedup and self._dedup.enabled):
            related = await self._related(scope, memories, now)
            await self._write(scope, [*memories, *related], len(memories))
            return [RememberOutcome(memory=m) for m in memories]
        async with self._exclusive(scope) as lease, self._dedup.plan(scope, memories, now) as plan:
            fresh = {m.id for m in memories}
            new = [m for m in plan.writes if m.id in fresh]
            related = await self._related(scope, new, now)
            await lease.confirm()
            await self._write(scope, [*plan.writes, *related], plan.new_count, lease.tenure)
        return [RememberOutcome(m, deduplicated=dup) for m, dup in plan.outcomes()]

    def _exclusive(self, scope: CallScope) -> AbstractAsyncContextManager[Lease]:
        """The partition's lease where replicas share the store (see partition_lease)."""
        if self._leases is None:
            return contextlib.nullcontext(Lease(None, scope.partition, None))
        return self._leases.hold(scope.partition)

    async def _related(
        self, scope: CallScope, new: Sequence[Memory], now: datetime
    ) -> list[Memory]:
        """Older memories the new ones supersede, contradict, support or refine
        (service/memories/contradiction.py), to be written with them."""
        if self._contradictions is None or not self._contradictions.enabled or not new:
            return []
        return await self._contradictions.resolve(scope, new, now)

    async def _write(
        self,
        scope: CallScope,
        memories: Sequence[Memory],
        adding: int,
        tenure: int | None = None,
    ) -> None:
        """Commit ``memories``, ``adding`` of which are new (the rest update old ones);
        ``tenure``: under the partition's lease (Lease.tenure)."""
        if self._quotas is not None:  # quotas.max_memories_per_partition
            await self._quotas.admit_memories(
                scope.partition,
                adding,
                lambda: self._writer.submit(scope.partition, memories),
                tenure=tenure,
            )
        else:
            await self._writer.submit(scope.partition, memories)

    async def update(self, scope: CallScope, memory_id: str, patch: MemoryPatch) -> Memory:
        # Read, if_version check and write under the lease where replicas share the store.
        async with self._exclusive(scope) as lease:
            return await self._update(scope, memory_id, patch, lease)

    async def _update(
        self, scope: CallScope, memory_id: str, patch: MemoryPatch, lease: Lease
    ) -> Memory:
        current = await self._get_visible(scope, memory_id, with_vectors=True)
        if patch.if_version is not None and patch.if_version != current.version:
            raise FailedPrecondition(
                f"if_version {patch.if_version} does not match the current version {current.version}"
            )
        now = self._clock()
        values = patch.values
        v = Violations("memory.")
        if "content" in patch.fields:
            check.check_content(v, values["content"], self._limits)
        if "tags" in patch.fields:
            check.check_tags(v, values["tags"], self._limits)
        for name in ("importance", "confidence"):
            if name in patch.fields:
                check.check_unit_interval(v, values[name], name)
        if "namespace" in patch.fields:
            check.check_namespace(v, values["namespace"], self._limits)
        if "metadata" in patch.fields:
            check.check_metadata(v, values["metadata"], self._limits)
        if "source" in patch.fields:
            check.check_source(v, values["source"])
        if "expires_at" in patch.fields:
            check.check_future(v, values["expires_at"], now, "expires_at")
        top_level = Violations()
        check.check_embedding(top_level, patch.embedding, self._embedder.dimension, "embedding")
        v.extend(top_level.items)
        v.raise_if_any()
        level = values.get("security_level") if "security_level" in patch.fields else None
        if level is not None and level > scope.clearance:
            raise PermissionDenied(
                f"memory.security_level: {level.name} is above the caller's clearance"
            )

        changes = {name: values[name] for name in patch.fields}
        if "metadata" in changes:
            # Relations and links are the daemon's; new metadata does not erase them.
            changes["metadata"] = {**reserved(current.metadata), **changes["metadata"]}
        if "tags" in changes:
            changes["tags"] = _normalise_tags(changes["tags"])
        updated = dataclasses.replace(
            current, **changes, updated_at=now, version=next_version(current.version)
        )
        if "metadata" in changes:
            updated.metadata_json = patch.metadata_json
        if "content" in patch.fields or patch.embedding is not None:
            space = self._embedder.model_id
            if patch.embedding is not None:
                vector = unit_rows(patch.embedding)
            else:
                embedded, space = await embed_in_space(self._embedder, [updated.content])
                vector = embedded[0]
            updated.vector = vector
            updated.embedding_model = space
            updated.embedding_dimension = self._embedder.dimension
        await lease.confirm()
        await self._writer.submit(scope.partition, [updated])
        return updated

    async def forget(self, scope: CallScope, ids: Sequence[str]) -> list[str]:
        if not ids:
            raise InvalidArgument.field("ids", "must not be empty")
        if len(ids) > self._limits.max_batch_size:
            raise InvalidArgument.field(
                "ids", f"has {len(ids)} ids; the limit is {self._limits.max_batch_size}"
            )
        # Memories above the caller's clearance behave as if they did not exist.
        visible = [
            m.id
            for m in await self._store.get(scope.partition, list(dict.fromkeys(ids)))
            if m.security_level <= scope.clearance
        ]
        if not visible:
            return []
        return await self._store.delete(scope.partition, visible)

    # ------------------------------------------------------------------ reads

    async def get(self, scope: CallScope, memory_id: str) -> Memory:
        memory = await self._get_visible(scope, memory_id)
        self._access.record(scope.partition, [memory.id], self._clock())
        return self._masked(scope, [memory])[0]

    def _masked(self, scope: CallScope, memories: list[Memory]) -> list[Memory]:
        """Copies with personal data masked, for a caller below the unmasked clearance
        (security/masking.py); the memories themselves are left as stored."""
        mask = self._masker.for_scope(scope) if self._masker is not None else None
        if mask is None:
            return memories
        out = []
        for memory in memories:
            copy = memory.copy()
            copy.content = mask(memory.content)
            out.append(copy)
        return out

    async def recall(self, scope: CallScope, query: RecallQuery) -> RecallOutcome:
        self._check_recall(query)
        limit = query.limit or self._recall.default_limit
        now = self._clock()
        flt = self._visible_filter(scope, query.filter, now)
        scorer = Scorer.resolve(query.scoring, self._recall)
        wide = max(limit * RERANK_FACTOR, MIN_RERANK_CANDIDATES)
        hybrid = self._recall.hybrid_default if query.hybrid is None else query.hybrid
        # Without query text there is nothing to match by keyword: vector-only.
        text = query.query.strip() if self._recall.hybrid_text_weight > 0 else ""
        space = self._embedder.model_id
        early_text: asyncio.Task[list[TextHit]] | None = None
        if query.embedding is not None:
            vector = unit_rows(query.embedding)
        else:
            if hybrid and text:
                # Full text needs no vector: it runs while the model embeds the query
                # (in a worker thread), not after.
                early_text = asyncio.ensure_future(
                    self._store.text_search(scope.partition, text, flt, wide)
                )
            try:
                embedded, space = await embed_in_space(self._embedder, [query.query], kind="query")
            except BaseException:
                abandon(early_text)
                raise
            vector = embedded[0]
        # Vectors are compared within one embedding space only (resilience/embedder.py).
        vector_flt = in_space(flt, self._embedder, space)
        # In the fallback space full text finds what vectors of that space cannot.
        hybrid = hybrid or space != self._embedder.model_id
        when = TimeQuery(query.query, query.now or now, self._recall)
        if hybrid and text:
            found = await hybrid_candidates(
                self._store,
                scope.partition,
                vector=vector,
                text=text,
                flt=flt,
                vector_flt=vector_flt,
                limit=wide,
                settings=self._recall,
                text_search=early_text,
            )
            found = await with_feedback(
                self._store,
                scope.partition,
                found,
                text=text,
                vector=vector,
                flt=flt,
                limit=wide,
                settings=self._recall,
            )
            found = await with_context(
                self._store, scope.partition, found, flt, vector, self._recall
            )
            scored = _scored_hybrid(found, scorer, now, when, limit)
        else:
            candidates = wide if scorer.reranks(hybrid=False) or when else limit
            hits = await self._store.search(scope.partition, vector, vector_flt, candidates)
            scored = _scored_vector(hits, scorer, now, when)
        if query.min_score is not None:
            scored = [s for s in scored if s.score >= query.min_score]
        scored.sort(key=lambda s: s.score, reverse=True)
        results = scored[:limit]
        self._access.record(scope.partition, (s.memory.id for s in results), now)
        masked = self._masked(scope, [s.memory for s in results])
        results = [dataclasses.replace(s, memory=m) for s, m in zip(results, masked, strict=True)]
        return RecallOutcome(results=results, embedding_model=space)

    def _check_recall(self, query: RecallQuery) -> None:
        v = Violations()
        check.check_limit(v, query.limit, self._limits.max_top_k, "limit")
        if query.embedding is None and not query.query.strip():
            v.add("query", "must not be empty unless query_embedding is given")
        if len(query.query.encode()) > self._limits.max_content_bytes:
            v.add("query", f"longer than {self._limits.max_content_bytes} bytes")
        check.check_embedding(v, query.embedding, self._embedder.dimension, "query_embedding")
        check.check_tags(v, query.filter.tags, self._limits)
        check.check_namespace(v, query.filter.namespace, self._limits)
        if query.scoring.half_life_hours is not None and not query.scoring.half_life_hours > 0:
            v.add("scoring.half_life_hours", "must be positive")
        for name in ("similarity_weight", "recency_weight", "importance_weight"):
            weight = getattr(query.scoring, name)
            if weight is not None and not (weight >= 0 and math.isfinite(weight)):
                v.add(f"scoring.{name}", "must be a finite number, not negative")
        v.raise_if_any()

    async def list_memories(self, scope: CallScope, query: ListQuery) -> MemoryPage:
        v = Violations()
        check.check_limit(v, query.page_size, self._limits.max_page_size, "page_size")
        check.check_tags(v, query.filter.tags, self._limits)
        check.check_namespace(v, query.filter.namespace, self._limits)
        v.raise_if_any()
        page_size = query.page_size or DEFAULT_PAGE_SIZE
        flt = self._visible_filter(scope, query.filter, None)
        query_print = fingerprint(scope, [dataclasses.asdict(flt), query.order.value])
        cursor = (
            self._page_tokens.decode(query.page_token, query_print) if query.page_token else None
        )
        # not_expired_at is evaluated per page so a long listing sees a consistent "now".
        flt = dataclasses.replace(flt, not_expired_at=self._clock())
        if query.order in ORDER_KEYS:
            rows = await ranked_page(
                self._store, scope.partition, flt, query.order, cursor, page_size + 1
            )
        else:
            rows = await self._store.list(
                scope.partition, flt, order=query.order, after=cursor, limit=page_size + 1
            )
        page, more = rows[:page_size], len(rows) > page_size
        token = ""
        if more:
            last = page[-1]
            position = (
                cursor_for(query.order, last)
                if query.order in ORDER_KEYS
                else PageCursor(last.created_at, last.id)
            )
            token = self._page_tokens.encode(position, query_print)
        return MemoryPage(memories=self._masked(scope, page), next_page_token=token)

    # ------------------------------------------------------------------ helpers

    def _visible_filter(
        self, scope: CallScope, flt: MemoryFilter, now: datetime | None
    ) -> MemoryFilter:
        """A request may lower its ceiling, never raise it above the caller's clearance."""
        ceiling = min(flt.max_security_level, scope.clearance)
        return dataclasses.replace(flt, max_security_level=ceiling, not_expired_at=now)

    async def _get_visible(
        self, scope: CallScope, memory_id: str, *, with_vectors: bool = False
    ) -> Memory:
        if not memory_id:
            raise InvalidArgument.field("id", "must not be empty")
        found = await self._store.get(scope.partition, [memory_id], with_vectors=with_vectors)
        if not found or found[0].security_level > scope.clearance:
            raise NotFound(f"memory {memory_id!r} not found")
        return found[0]

    def _draft_violations(
        self, draft: MemoryDraft, now: datetime, prefix: str
    ) -> list[FieldViolation]:
        v = Violations(prefix)
        check.check_content(v, draft.content, self._limits)
        check.check_tags(v, draft.tags, self._limits)
        check.check_unit_interval(v, draft.importance, "importance")
        check.check_unit_interval(v, draft.confidence, "confidence")
        check.check_namespace(v, draft.namespace, self._limits)
        check.check_metadata(v, draft.metadata, self._limits)
        check.check_source(v, draft.source)
        check.check_future(v, draft.expires_at, now, "expires_at")
        if draft.created_at is not None and draft.created_at > now:
            v.add("created_at", "must not be in the future")
        check.check_embedding(v, draft.embedding, self._embedder.dimension, "embedding")
        return v.items

    async def _vectors_for(self, drafts: Sequence[MemoryDraft]) -> tuple[list[Vector], list[str]]:
        """Each draft's vector and the embedding space (model) it belongs to."""
        supplied = [(i, d.embedding) for i, d in enumerate(drafts) if d.embedding is not None]
        vectors: list[Vector | None] = [None] * len(drafts)
        if supplied:
            # One normalisation for the batch (rows of one matrix), not one per draft.
            rows = unit_rows(np.stack([embedding for _, embedding in supplied]))
            for row, (i, _) in enumerate(supplied):
                vectors[i] = rows[row]
        spaces = [self._embedder.model_id] * len(drafts)
        missing = [i for i, vec in enumerate(vectors) if vec is None]
        if missing:
            embedded, space = await embed_in_space(
                self._embedder, [drafts[i].content for i in missing]
            )
            for row, i in enumerate(missing):
                vectors[i] = embedded[row]
                spaces[i] = space
        return [vec for vec in vectors if vec is not None], spaces

    def _new_memory(
        self, scope: CallScope, draft: MemoryDraft, vector: Vector, now: datetime, space: str
    ) -> Memory:
        created = draft.created_at or now
        return Memory(
            id=str(uuid.uuid4()),
            tenant_id=scope.partition.tenant_id,
            agent_id=scope.partition.agent_id,
            namespace=draft.namespace,
            content=draft.content,
            memory_type=draft.memory_type,
            tags=_normalise_tags(draft.tags),
            security_level=draft.security_level or DEFAULT_SECURITY_LEVEL,
            importance=0.5 if draft.importance is None else draft.importance,
            confidence=1.0 if draft.confidence is None else draft.confidence,
            source=draft.source,
            metadata=dict(draft.metadata),
            metadata_json=draft.metadata_json,
            created_at=created,
            updated_at=created,
            expires_at=draft.expires_at,
            occurred_at=draft.occurred_at,
            embedding_model=space,
            embedding_dimension=self._embedder.dimension,
            vector=vector,
        )


def _scored_hybrid(
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


def _scored_vector(
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


def _normalise_tags(tags: Sequence[str]) -> tuple[str, ...]:
    """Trimmed, de-duplicated, order kept."""
    return tuple(dict.fromkeys(t.strip() for t in tags))
