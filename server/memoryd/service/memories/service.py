"""Long-term memory operations: remember, recall, get, list, update, forget."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import math
import uuid
from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from datetime import datetime

import numpy as np

from memoryd.aio import abandon
from memoryd.config import DedupSettings, LimitsSettings, RecallSettings
from memoryd.domain.conversation import with_position
from memoryd.domain.errors import (
    FieldViolation,
    InvalidArgument,
    NotFound,
    PermissionDenied,
)
from memoryd.domain.models import (
    Clock,
    Memory,
    MemoryFilter,
    PageCursor,
    SecurityLevel,
    TextHit,
    Vector,
    unit_query,
    unit_rows,
    utcnow,
)
from memoryd.domain.principal import CallScope
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
from memoryd.model_catalog import Relevance, profile_of
from memoryd.resilience.embedder import embed_in_space, in_space
from memoryd.service.common import validation as check
from memoryd.service.common.leases import Lease, PartitionLeases
from memoryd.service.common.memory_writes import Changes, MemoryWrites
from memoryd.service.common.pagination import PageTokenCodec, fingerprint
from memoryd.service.common.quotas import Quotas
from memoryd.service.common.validation import Violations
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.context import with_context
from memoryd.service.memories.contradiction import (
    NOTHING_RELATED,
    ContradictionResolver,
    Related,
)
from memoryd.service.memories.dedup import Deduplicator
from memoryd.service.memories.feedback import with_feedback
from memoryd.service.memories.hybrid import hybrid_candidates
from memoryd.service.memories.ordering import ORDER_KEYS, cursor_for, ranked_page
from memoryd.service.memories.relevance import absolute_relevance, coverage, query_terms
from memoryd.service.memories.scoring import Scorer, scored_hybrid, scored_vector
from memoryd.service.memories.support import with_neighbour_support
from memoryd.service.memories.temporal import TimeQuery
from memoryd.service.memories.updates import (
    NewVector,
    check_patch,
    check_version,
    normalise_tags,
    patched,
)
from memoryd.storage.base import ListPage, Store

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
        leases: PartitionLeases | None = None,
        relevance: Relevance | None = None,
        clock: Clock = utcnow,
    ) -> None:
        """``relevance``: the embedder's calibration of the absolute relevance
        (model_catalog.Profile.relevance; unset: MiniLM's). ``store``: where key
        mirrors are embedded behind the answer, behind their read fence
        (storage/fenced.py), so every read here sees the key writes answered before."""
        self._clock = clock
        self._relevance = relevance or profile_of("minilm").relevance
        #: Replicas sharing the store: Remember plans (deduplication, quotas) under a
        #: partition lease; updates need none (the conditional write decides).
        self._leases = leases
        self._store = store
        #: Every read-modify-write of a stored memory (service/common/memory_writes.py).
        self._writes = MemoryWrites(store)
        self._embedder = embedder
        self._writer = writer
        self._access = access
        self._page_tokens = page_tokens
        self._limits = limits
        self._recall = recall
        self._quotas = quotas
        self._dedup_settings = dedup or DedupSettings()
        self._dedup = Deduplicator(store, self._dedup_settings, dimension=embedder.dimension)
        self._contradictions = contradictions

    @property
    def store(self) -> Store:
        """The store this service reads and writes."""
        return self._store

    def reader(self, store: Store, clock: Clock) -> MemoryService:
        """This service's reads over ``store`` with ``clock`` as its "now" (as-of
        reads: service/snapshot/as_of.py): the same embedder and settings; what its
        reads record (access statistics) stays in a buffer never flushed."""
        return MemoryService(
            store=store,
            embedder=self._embedder,
            writer=WriteBatcher(store, max_batch=1),
            access=AccessStatsBuffer(store, interval_s=3600.0, max_pending=2**62),
            page_tokens=self._page_tokens,
            limits=self._limits,
            recall=self._recall,
            dedup=self._dedup_settings,
            relevance=self._relevance,
            clock=clock,
        )

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
        return await self._writes.run(lambda: self._remember_once(scope, memories, now, dedup))

    async def _remember_once(
        self, scope: CallScope, drafted: Sequence[Memory], now: datetime, dedup: bool
    ) -> list[RememberOutcome]:
        """One attempt: plan (deduplication, relations) against what is stored, and
        write conditionally on the versions planned against (MemoryWrites.run starts
        another attempt when one moved on meanwhile)."""
        memories = [m.copy() for m in drafted]  # relations are recorded on them
        if not (dedup and self._dedup.enabled):
            related = await self._related(scope, memories, now)
            await self._write(scope, [*memories, *related.writes], len(memories), related.expected)
            return [RememberOutcome(memory=m) for m in memories]
        async with self._exclusive(scope) as lease, self._dedup.plan(scope, memories, now) as plan:
            fresh = {m.id for m in memories}
            new = [m for m in plan.writes if m.id in fresh]
            related = await self._related(scope, new, now)
            if not await plan.settled():
                raise MemoryWrites.moved()
            # A memory both merged into and related keeps the merge (it is the newer
            # text); the relation stays recorded on the new memory.
            merged = {m.id for m in plan.writes}
            also = [m for m in related.writes if m.id not in merged]
            expected = {**related.expected, **plan.expected}
            await lease.confirm()
            await self._write(scope, [*plan.writes, *also], plan.new_count, expected, lease.tenure)
        return [RememberOutcome(m, deduplicated=dup) for m, dup in plan.outcomes()]

    def _exclusive(self, scope: CallScope) -> AbstractAsyncContextManager[Lease]:
        """The partition's lease where replicas share the store (see partition_lease)."""
        if self._leases is None:
            return contextlib.nullcontext(Lease(None, scope.partition, None))
        return self._leases.hold(scope.partition)

    async def _related(self, scope: CallScope, new: Sequence[Memory], now: datetime) -> Related:
        """Older memories the new ones supersede, contradict, support or refine
        (service/memories/contradiction.py), to be written with them."""
        if self._contradictions is None or not self._contradictions.enabled or not new:
            return NOTHING_RELATED
        return await self._contradictions.resolve(scope, new, now)

    async def _write(
        self,
        scope: CallScope,
        memories: Sequence[Memory],
        adding: int,
        expected: Mapping[str, int | None],
        tenure: int | None = None,
    ) -> None:
        """Commit ``memories``, ``adding`` of which are new (the rest update old ones
        read at the ``expected`` versions: a conditional write, which fails the
        attempt when one moved on; without any, through the write batcher);
        ``tenure``: under the partition's lease (Lease.tenure)."""

        async def commit() -> None:
            if expected:
                await self._writes.write(scope.partition, memories, expected)
            else:
                await self._writer.submit(scope.partition, memories)

        if self._quotas is not None:  # quotas.max_memories_per_partition
            await self._quotas.admit_memories(scope.partition, adding, commit, tenure=tenure)
        else:
            await commit()

    async def update(self, scope: CallScope, memory_id: str, patch: MemoryPatch) -> Memory:
        """Apply ``patch`` with a conditional write: a concurrent change of the memory
        makes it re-read and re-apply the patch (never overwrite that change), or fail
        with FAILED_PRECONDITION where ``if_version`` names the state it was for."""
        current = await self._get_visible(scope, memory_id, with_vectors=True)
        check_version(patch, current)
        now = self._clock()
        check_patch(scope, patch, self._limits, self._embedder.dimension, now)
        vector = await self._patch_vector(patch)

        async def change(read: Mapping[str, Memory]) -> Changes:
            found = read.get(memory_id)
            if found is None or found.security_level > scope.clearance:
                raise NotFound(f"memory {memory_id!r} not found")
            check_version(patch, found)
            return Changes([patched(found, patch, now, vector)])

        written = await self._writes.modify(
            scope.partition, [memory_id], change, read={memory_id: current}
        )
        return written.upserts[0]

    async def _patch_vector(self, patch: MemoryPatch) -> NewVector | None:
        """The vector an update writes: the caller's, or new content embedded."""
        dimension = self._embedder.dimension
        if patch.embedding is not None:
            return NewVector(unit_rows(patch.embedding), self._embedder.model_id, dimension)
        if "content" not in patch.fields:
            return None
        embedded, space = await embed_in_space(self._embedder, [patch.values["content"]])
        return NewVector(embedded[0], space, dimension)

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
        return memory

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
        dimension = self._embedder.dimension
        if query.embedding is not None:
            vector = unit_query(query.embedding, dimension)  # _check_recall named a bad one
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
            vector = unit_query(embedded[0], dimension)
        # Vectors are compared within one embedding space only (resilience/embedder.py).
        vector_flt = in_space(flt, self._embedder, space)
        # In the fallback space full text finds what vectors of that space cannot.
        hybrid = hybrid or space != self._embedder.model_id
        # Recency counts to the time the question is asked (RecallQuery.now), as the
        # times the query names do.
        asked = query.now or now
        when = TimeQuery(query.query, asked, self._recall)
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
            found = with_neighbour_support(found, self._recall)
            window = query.context_window
            found = await with_context(
                self._store,
                scope.partition,
                found,
                flt,
                vector,
                self._recall,
                self._recall.context_neighbours if window is None else window,
            )
            scored = scored_hybrid(found, scorer, asked, when, limit)
        else:
            candidates = wide if scorer.reranks(hybrid=False) or when else limit
            hits = await self._store.search(scope.partition, vector, vector_flt, candidates)
            scored = scored_vector(hits, scorer, asked, when)
        if query.min_score is not None:
            scored = [s for s in scored if s.score >= query.min_score]
        scored.sort(key=lambda s: s.score, reverse=True)
        results = self._relevant(scored, query, limit, same_space=space == self._embedder.model_id)
        self._access.record(scope.partition, (s.memory.id for s in results), now)
        return RecallOutcome(results=results, embedding_model=space)

    def _relevant(
        self, scored: list[ScoredMemory], query: RecallQuery, limit: int, *, same_space: bool
    ) -> list[ScoredMemory]:
        """The first ``limit`` of ``scored`` (best first) at or above the query's
        min_relevance, each with its absolute relevance (service/memories/relevance.py).
        Computed for those alone, in order: a few tokenised contents per recall. In the
        fallback's embedding space the cosine says nothing on the model's scale: the
        relevance then rests on the query terms a memory holds."""
        terms = query_terms(query.query)
        calibration = self._relevance
        out: list[ScoredMemory] = []
        for s in scored:
            cosine = s.components.similarity if same_space else calibration.cosine_centre
            relevance = absolute_relevance(calibration, cosine, coverage(terms, s.memory.content))
            if query.min_relevance is not None and relevance < query.min_relevance:
                continue
            out.append(dataclasses.replace(s, relevance=relevance))
            if len(out) == limit:
                break
        return out

    def _check_recall(self, query: RecallQuery) -> None:
        v = Violations()
        check.check_limit(v, query.limit, self._limits.max_top_k, "limit")
        check.check_unit_interval(v, query.min_relevance, "min_relevance")
        check.check_context_window(v, query.context_window)
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
                scope.partition, flt, ListPage(query.order, cursor, page_size + 1)
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
        return MemoryPage(memories=page, next_page_token=token)

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
        check.check_session_position(
            v, draft.session_id, draft.sequence, draft.metadata, self._limits
        )
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
            tags=normalise_tags(draft.tags),
            security_level=draft.security_level or DEFAULT_SECURITY_LEVEL,
            importance=0.5 if draft.importance is None else draft.importance,
            confidence=1.0 if draft.confidence is None else draft.confidence,
            source=draft.source,
            metadata=with_position(draft.metadata, draft.session_id, draft.sequence),
            metadata_json=draft.metadata_json,
            created_at=created,
            updated_at=created,
            expires_at=draft.expires_at,
            occurred_at=draft.occurred_at,
            embedding_model=space,
            embedding_dimension=self._embedder.dimension,
            vector=vector,
        )
