"""BuildSnapshot: what an agent run starts with, within a token budget.

Sections (each optional): pinned memories (tag ``pinned``, most important first),
the agent profile, the working memory of a scope, semantic hits for the trigger
(recall), recent memories (created within a window, newest first) and the session
window. They are gathered concurrently, de-duplicated across sections and packed in
priority order (snapshot_pack.py), then rendered (snapshot_render.py). Archived,
expired and above-clearance memories never appear.

A section whose input is missing (no scope, no session id, no trigger) is skipped
when the request asks for every section, and is INVALID_ARGUMENT when the request
names it. A dependency that fails degrades the snapshot instead of failing it, and
``degraded`` names each one it was served with: the embedder (semantic hits from the
hashing fallback space or full-text search), the store (a section it cannot serve is
left out; reads overlaid on the write-ahead log while it is down), the LLM (a session
summary made by the extractive fallback).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta

from memoryd.config import LimitsSettings, SnapshotSettings
from memoryd.domain.agent_state import FixedZoneKind, WorkingScope
from memoryd.domain.errors import EmbeddingError, NotFound, Unavailable
from memoryd.domain.models import Clock, Memory, MemoryFilter, utcnow
from memoryd.domain.principal import CallScope
from memoryd.domain.requests import Degradation, ListQuery, RecallQuery
from memoryd.domain.snapshot import (
    DEFAULT_PRIORITY,
    PINNED_TAG,
    Snapshot,
    SnapshotRequest,
    SnapshotSection,
)
from memoryd.resilience.degradation import ComponentStates, collecting, report
from memoryd.security.masking import Mask, Masker, mask_path
from memoryd.service.agent_state.profile import ProfileService
from memoryd.service.agent_state.working import WorkingMemoryService
from memoryd.service.common import validation as check
from memoryd.service.common.tokens import TokenCounter
from memoryd.service.common.validation import Violations
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.service import SessionService
from memoryd.service.sessions.window import BUDGET_COMPONENT
from memoryd.service.snapshot.pack import Packer
from memoryd.service.snapshot.render import Candidate
from memoryd.storage.base import Store
from memoryd.text import normalise_content

EMBEDDER_COMPONENT = "embedder"
STORE_COMPONENT = "store"
#: Components whose impairment degrades every read made meanwhile: while the store is
#: down, reads overlay the write-ahead log.
AMBIENT_COMPONENTS = ("store",)
#: Extra candidates fetched for limited sections, so duplicates of earlier sections
#: do not leave them short.
_SPARE = 5
_MAX_RECENT_WINDOW = timedelta(days=3650)

S = SnapshotSection


@dataclass(frozen=True, slots=True)
class _Plan:
    budget: int
    #: Sections to fill, in fill (and render) order.
    order: tuple[SnapshotSection, ...]
    semantic_limit: int
    recent_limit: int
    recent_window: timedelta
    query: str


@dataclass(slots=True)
class _Gathered:
    candidates: list[Candidate]
    degraded: list[Degradation]


@dataclass(eq=False, kw_only=True)
class SnapshotService:
    """Snapshots: the sections of an agent's memory that fit a token budget, rendered."""

    memories: MemoryService
    store: Store
    dimension: int
    counter: TokenCounter
    settings: SnapshotSettings
    limits: LimitsSettings
    #: The dependencies' health, reported in ``degraded`` (empty: none known).
    states: ComponentStates = field(default_factory=ComponentStates)
    #: The sources of the optional sections (None: that section is not enabled).
    profiles: ProfileService | None = None
    working: WorkingMemoryService | None = None
    sessions: SessionService | None = None
    masker: Masker | None = None
    clock: Clock = utcnow

    @property
    def token_counter(self) -> TokenCounter:
        return self.counter

    async def build(self, scope: CallScope, req: SnapshotRequest) -> Snapshot:
        """The snapshot, with every fallback it was served with in ``degraded`` (a
        component named by a section keeps that section's reason: it says more)."""
        with collecting() as reported:
            snapshot = await self._build(scope, req)
        for item in reported:  # the caller's collector hears them too
            report(item.component, item.reason)
        ambient = self.states.impaired(*AMBIENT_COMPONENTS)
        degraded = list(snapshot.degraded)
        for item in (*reported, *ambient):
            if not any(d.component == item.component for d in degraded):
                degraded.append(item)
        return replace(snapshot, degraded=tuple(degraded))

    async def _build(self, scope: CallScope, req: SnapshotRequest) -> Snapshot:
        plan = self._plan(req)
        gatherers = {
            S.PINNED: self._pinned,
            S.PROFILE: self._profile,
            S.WORKING: self._working_memory,
            S.SEMANTIC: self._semantic,
            S.RECENT: self._recent,
            S.SESSION: self._session,
        }
        results = await asyncio.gather(
            *(
                self._section(section, gatherers[section], scope, req, plan)
                for section in plan.order
            )
        )
        degraded: list[Degradation] = []
        by_section: dict[SnapshotSection, list[Candidate]] = {}
        for section, gathered in zip(plan.order, results, strict=True):
            by_section[section] = gathered.candidates
            degraded.extend(gathered.degraded)
        candidates = _limited(by_section, plan)
        mask = self.masker.for_scope(scope) if self.masker is not None else None
        if mask is not None:  # before packing: the budget counts what is returned
            candidates = [_masked(c, mask) for c in candidates]
        packed = Packer(self.counter, req.format, plan.budget).pack(candidates, plan.order)
        return Snapshot(
            text=packed.text,
            items=packed.items,
            usage=packed.usage,
            tokens_used=packed.tokens_used,
            token_budget=plan.budget,
            omitted=packed.omitted,
            token_counter=self.counter.name,
            degraded=tuple(dict.fromkeys(degraded)),
        )

    # ------------------------------------------------------------------ plan

    def _plan(self, req: SnapshotRequest) -> _Plan:
        s = self.settings
        v = Violations()
        budget = s.default_token_budget if req.token_budget is None else req.token_budget
        if not 1 <= budget <= s.max_token_budget:
            v.add("token_budget", f"must be between 1 and {s.max_token_budget}, got {budget}")
        for name, value in (
            ("semantic_limit", req.semantic_limit),
            ("recent_limit", req.recent_limit),
        ):
            check.check_limit(v, value, self.limits.max_top_k, name)
        window = req.recent_window
        if window is None:
            window = timedelta(seconds=s.recent_window_s)
        if not timedelta(0) < window <= _MAX_RECENT_WINDOW:
            v.add("recent_window", f"must be positive and at most {_MAX_RECENT_WINDOW.days} days")
        check.check_namespace(v, req.namespace, self.limits)
        check.check_unit_interval(v, req.min_relevance, "min_relevance")
        check.check_context_window(v, req.context_window)
        check.check_embedding(v, req.trigger_embedding, self.dimension, "trigger_embedding")
        for i, section in enumerate(req.priority):
            if section in req.priority[:i]:
                v.add(f"priority[{i}]", f"repeats {section.value}")

        query = "\n".join(t for t in (req.trigger.strip(), req.focus.strip()) if t)
        available = {
            S.PINNED: None,
            S.PROFILE: None if self.profiles else "agent profiles are not enabled",
            S.WORKING: None
            if req.scope is not None and (req.scope.thread_id or req.scope.resource_id)
            else "scope: thread_id or resource_id must be set for the working section",
            S.SEMANTIC: None
            if query or req.trigger_embedding is not None
            else "trigger: must be set (or trigger_embedding) for the semantic section",
            S.RECENT: None,
            S.SESSION: None
            if req.session_id
            else "session_id: must be set for the session section",
        }
        if self.working is None:
            available[S.WORKING] = "working memory is not enabled"
        if self.sessions is None:
            available[S.SESSION] = "sessions are not enabled"
        wanted = set(req.sections) or set(DEFAULT_PRIORITY)
        if req.sections:
            for section in dict.fromkeys(req.sections):
                reason = available[section]
                if reason is not None:
                    named, _, text = reason.partition(": ")
                    if text:
                        v.add(named, text)
                    else:
                        v.add("sections", f"{section.value}: {reason}")
        v.raise_if_any()
        order = tuple(
            section
            for section in dict.fromkeys((*req.priority, *DEFAULT_PRIORITY))
            if section in wanted and available[section] is None
        )
        # The embedder truncates long text anyway; recall limits its query's size.
        query = query.encode()[: self.limits.max_content_bytes].decode(errors="ignore")
        return _Plan(
            budget=budget,
            order=order,
            semantic_limit=req.semantic_limit or s.semantic_limit,
            recent_limit=req.recent_limit or s.recent_limit,
            recent_window=window,
            query=query,
        )

    # ------------------------------------------------------------------ sections

    @staticmethod
    async def _section(
        section: SnapshotSection,
        gather: Callable[[CallScope, SnapshotRequest, _Plan], Awaitable[_Gathered]],
        scope: CallScope,
        req: SnapshotRequest,
        plan: _Plan,
    ) -> _Gathered:
        """One section; a dependency it cannot do without leaves it out, said so."""
        try:
            return await gather(scope, req, plan)
        except Unavailable as exc:
            component = EMBEDDER_COMPONENT if isinstance(exc, EmbeddingError) else STORE_COMPONENT
            reason = f"{section.value} section left out: {exc.message}"
            return _Gathered([], [Degradation(component, reason)])

    @staticmethod
    def _filter(
        req: SnapshotRequest, tags: tuple[str, ...] = (), created_after: datetime | None = None
    ) -> MemoryFilter:
        return MemoryFilter(
            namespace=req.namespace,
            tags=tags,
            created_after=created_after,
            max_security_level=req.max_security_level,
            trust=req.trust,
        )

    async def _pinned(self, scope: CallScope, req: SnapshotRequest, plan: _Plan) -> _Gathered:
        page = await self.memories.list_memories(
            scope,
            ListQuery(
                filter=self._filter(req, tags=(PINNED_TAG,)),
                page_size=min(self.settings.max_pinned, self.limits.max_page_size),
            ),
        )
        ranked = sorted(page.memories, key=lambda m: (-m.importance, -m.updated_at.timestamp()))
        return _Gathered([_memory_candidate(S.PINNED, m, i) for i, m in enumerate(ranked)], [])

    async def _profile(self, scope: CallScope, req: SnapshotRequest, plan: _Plan) -> _Gathered:
        assert self.profiles is not None
        try:
            profile = await self.profiles.get(scope)
        except NotFound:
            return _Gathered([], [])
        if not profile.content.strip():
            return _Gathered([], [])
        candidate = Candidate(
            section=S.PROFILE,
            id="agent.md",
            text=profile.content.strip(),
            tag="document",
            dedup_key=normalise_content(profile.content),
        )
        return _Gathered([candidate], [])

    async def _working_memory(
        self, scope: CallScope, req: SnapshotRequest, plan: _Plan
    ) -> _Gathered:
        assert self.working is not None and req.scope is not None
        wscope = WorkingScope(req.scope.thread_id, req.scope.resource_id)
        try:
            wm = await self.working.get(scope, wscope)
        except NotFound:
            return _Gathered([], [])
        if not wm.content:
            return _Gathered([], [])
        text = wm.content_json  # as the agent wrote it
        name = f"{wscope.thread_id}/{wscope.resource_id}"
        candidate = Candidate(
            section=S.WORKING,
            id=name,
            text=text,
            tag="state",
            attrs=(("scope", name),),
            dedup_key=normalise_content(text),
        )
        return _Gathered([candidate], [])

    async def _semantic(self, scope: CallScope, req: SnapshotRequest, plan: _Plan) -> _Gathered:
        limit = min(plan.semantic_limit + _SPARE, self.limits.max_top_k)
        query = RecallQuery(
            query=plan.query,
            embedding=req.trigger_embedding,
            limit=limit,
            filter=self._filter(req),
            min_relevance=req.min_relevance,
            context_window=req.context_window,
        )
        degraded: list[Degradation] = []
        try:
            outcome = await self.memories.recall(scope, query)
            found = [r.memory for r in outcome.results]
            degraded.extend(outcome.degraded)
        except EmbeddingError as exc:
            if not plan.query:
                raise
            flt = replace(
                self._filter(req),
                max_security_level=min(req.max_security_level, scope.clearance),
                not_expired_at=self.clock(),
            )
            hits = await self.store.text_search(scope.partition, plan.query, flt, limit)
            found = [h.memory for h in hits]
            degraded.append(
                Degradation(
                    EMBEDDER_COMPONENT,
                    f"embedder unavailable ({exc.message}); semantic section from full-text search",
                )
            )
        return _Gathered(
            [_memory_candidate(S.SEMANTIC, m, i) for i, m in enumerate(found)], degraded
        )

    async def _recent(self, scope: CallScope, req: SnapshotRequest, plan: _Plan) -> _Gathered:
        since = self.clock() - plan.recent_window
        page = await self.memories.list_memories(
            scope,
            ListQuery(
                filter=self._filter(req, created_after=since),
                page_size=min(plan.recent_limit + _SPARE, self.limits.max_page_size),
            ),
        )
        return _Gathered(
            [_memory_candidate(S.RECENT, m, i) for i, m in enumerate(page.memories)], []
        )

    async def _session(self, scope: CallScope, req: SnapshotRequest, plan: _Plan) -> _Gathered:
        assert self.sessions is not None
        try:
            window = await self.sessions.window(scope, req.session_id, plan.budget)
        except NotFound:
            return _Gathered([], [])
        out: list[Candidate] = []
        instructions = 0
        for entry in window.fixed_zone:
            if entry.kind is FixedZoneKind.INSTRUCTION:
                instructions += 1
                item_id = f"instruction:{instructions}"
            else:
                item_id = entry.kind.value
            out.append(_session_candidate(item_id, entry.content, entry.kind.value, len(out)))
        if window.summary:
            out.append(_session_candidate("summary", window.summary, "summary", len(out)))
        base = len(out)
        # Newest first: when the budget runs out, the oldest turns are the ones left out.
        for message in reversed(window.recent):
            role = message.role.value
            who = f"{role}({message.name})" if message.name else role
            candidate = _session_candidate(
                f"message:{message.seq}", message.content, who, base + message.seq
            )
            out.append(replace(candidate, tag="message", attrs=(("role", message.role.value),)))
        # Budget cuts are this snapshot's own business (reported as omitted items).
        degraded = [d for d in window.degraded if d.component != BUDGET_COMPONENT]
        return _Gathered(out, degraded)


def _masked(candidate: Candidate, mask: Mask) -> Candidate:
    """What a low-clearance caller reads of a candidate: its text, label and key masked
    as text (as the door masks the rendered snapshot again, which then stays as it was
    counted); ids, scopes and enum attributes are not personal data."""
    attrs = tuple(
        (name, mask_path(value, mask) if name == "key" else value)
        for name, value in candidate.attrs
    )
    source = candidate.source
    if source is not None:  # rendered in the text, which the door masks again
        source = replace(source, name=mask(source.name), locator=mask(source.locator))
    return replace(
        candidate,
        text=mask(candidate.text),
        label=mask(candidate.label),
        attrs=attrs,
        source=source,
    )


def _memory_candidate(section: SnapshotSection, m: Memory, rank: int) -> Candidate:
    attrs = [("type", m.memory_type.value)]
    if m.key:
        attrs.append(("key", m.key))
    return Candidate(
        section=section,
        id=m.id,
        text=m.content,
        tag="memory",
        bullet=True,
        attrs=tuple(attrs),
        order=rank,
        memory_id=m.id,
        dedup_key=normalise_content(m.content),
        memory_type=m.memory_type.value,
        source=m.source,
    )


def _session_candidate(item_id: str, text: str, label: str, order: int) -> Candidate:
    return Candidate(
        section=S.SESSION,
        id=item_id,
        text=text,
        tag=label,
        label=label,
        order=order,
        dedup_key=normalise_content(text),
    )


def _limited(by_section: dict[SnapshotSection, list[Candidate]], plan: _Plan) -> list[Candidate]:
    """Candidates in fill order; the semantic and recent sections keep their best
    ``limit`` items that earlier sections do not already hold (their duplicates stay
    in, to be reported as such)."""
    limits = {S.SEMANTIC: plan.semantic_limit, S.RECENT: plan.recent_limit}
    seen_ids: set[str] = set()
    seen_texts: set[str] = set()
    out: list[Candidate] = []
    for section in plan.order:
        kept = 0
        limit = limits.get(section)
        for c in by_section.get(section, []):
            duplicate = (c.memory_id and c.memory_id in seen_ids) or (
                c.dedup_key and c.dedup_key in seen_texts
            )
            if limit is not None and not duplicate and kept >= limit:
                continue
            out.append(c)
            if not duplicate:
                kept += 1
                if c.memory_id:
                    seen_ids.add(c.memory_id)
                if c.dedup_key:
                    seen_texts.add(c.dedup_key)
    return out
