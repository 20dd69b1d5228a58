"""Remember-time contradiction handling: the newest memory about a subject wins.

For every memory a Remember stores as new (near-duplicates are merged by
memoryd.service.memories.dedup first), the live memories of the same partition, namespace,
security level and embedding space closest to it (``contradictions.candidates`` of
them at cosine >= ``contradictions.min_similarity``), plus the batch's earlier items,
are judged:

- by the LLM when one is configured (``contradictions.mode`` "auto" or "llm"): for each
  candidate, whether the new memory supersedes, contradicts, supports or refines it;
- otherwise, or when the LLM fails (said in ``degraded``, component "llm"), by the rules
  of memoryd.service.memories.claims. Their "one kind of value" check compares Chinese values
  by character and others by the cosine of the two values' embeddings
  (``contradictions.value_similarity``). When those find no relation, a changed value
  of one subject's slot (memoryd.service.memories.slots: "the deadline is Friday" ->
  "the deadline moved to Monday", 截止日期是周五 -> 截止日期改到周一) supersedes.

A memory superseded or contradicted is archived (it leaves recall and snapshots; its
history stays, Restore brings it back) with ``superseded_by`` naming the new one; every
relation is recorded on both memories (memoryd.domain.relations). Keyed memories
(their slot already keeps the latest write) and pinned ones are never candidates.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

import numpy as np

from memoryd.config import ContradictionSettings
from memoryd.domain.limits import next_version
from memoryd.domain.models import Memory, MemoryFilter, unit_queries
from memoryd.domain.principal import CallScope
from memoryd.domain.relations import REPLACING, RelationKind, link
from memoryd.domain.snapshot import PINNED_TAG
from memoryd.embedding.base import Embedder
from memoryd.resilience.degradation import report
from memoryd.service.common.llm import LLM_COMPONENT, ChatClient, ChatMessage, LLMError
from memoryd.service.common.memory_writes import MemoryWrites
from memoryd.service.memories.claims import Claim, Judgement, claims, judge, same_kind_cjk
from memoryd.service.memories.slots import changed_value, slot_of
from memoryd.storage.base import Nearest, Store

JUDGE_SYSTEM_PROMPT = (
    "You maintain an AI agent's long-term memory. Given a NEW memory and EXISTING ones, "
    'say for each existing memory how the NEW one relates to it: "supersedes" (same '
    "subject, the NEW one updates or changes it, so the existing one is outdated), "
    '"contradicts" (the NEW one says it is no longer or not true), "supports" (says '
    'the same), "refines" (says the same with more detail) or "none". Answer with a '
    'JSON array only: [{"ref": "m1", "relation": "supersedes"}, ...].'
)
_RELATIONS = {
    "supersedes": RelationKind.SUPERSEDES,
    "contradicts": RelationKind.CONTRADICTS,
    "supports": RelationKind.SUPPORTS,
    "refines": RelationKind.REFINES,
}


@dataclass(frozen=True, slots=True)
class Related:
    """The stored memories a Remember relates its new ones to, to be written with them,
    and the version of each as judged: the write is conditional on it (a memory
    changed since is judged again, never overwritten)."""

    writes: list[Memory]
    expected: dict[str, int | None]


NOTHING_RELATED = Related([], {})


@dataclass(slots=True)
class _Candidate:
    memory: Memory
    #: Stored (an update must be written) or an earlier item of the same batch.
    stored: bool
    #: The cosine of its vector and the new memory's.
    similarity: float


class ContradictionResolver:
    def __init__(
        self,
        store: Store,
        embedder: Embedder,
        settings: ContradictionSettings,
        llm: ChatClient | None = None,
    ) -> None:
        self._store = store
        self._embedder = embedder
        self._settings = settings
        self._llm = llm if settings.mode in ("auto", "llm") else None

    @property
    def enabled(self) -> bool:
        return self._settings.mode != "off"

    async def resolve(self, scope: CallScope, memories: Sequence[Memory], now: datetime) -> Related:
        """Relate ``memories`` (new, in request order; updated in place) to what is
        stored and to each other. Returns the stored memories to write back (archived
        or linked), with their vectors."""
        use_llm = self._llm is not None and len(memories) <= self._settings.llm_max_batch
        parsed = [claims(m.content) for m in memories]
        wanted = [
            i
            for i, m in enumerate(memories)
            if not m.key and (parsed[i] or use_llm or slot_of(m.content) is not None)
        ]
        if not wanted:
            return NOTHING_RELATED
        stored = await self._stored_candidates(scope, [memories[i] for i in wanted], now)
        touched: dict[str, Memory] = {}
        known = {memories[i].id: parsed[i] for i in wanted}
        for position, i in enumerate(wanted):
            new = memories[i]
            # A stored memory an earlier item already changed is judged in that state.
            pool = [_Candidate(touched.get(c.id, c), True, sim) for c, sim in stored[position]]
            pool += [
                _Candidate(memories[j], False, sim)
                for j, sim in self._closest_earlier(memories, wanted[:position], new)
            ]
            pool = [c for c in pool if not c.memory.archived]
            if not pool:
                continue
            verdicts = await self._verdicts(new, parsed[i], pool, use_llm, known)
            for candidate, kind, reason in verdicts:
                old = candidate.memory
                # The relation's strength: how close the two memories are.
                link(new, old, kind, now, reason, candidate.similarity)
                if kind in REPLACING:
                    old.archived = True
                if candidate.stored:
                    touched[old.id] = old
        return await self._with_vectors(scope, list(touched.values()), now)

    # ------------------------------------------------------------------ candidates

    async def _stored_candidates(
        self, scope: CallScope, memories: Sequence[Memory], now: datetime
    ) -> list[list[tuple[Memory, float]]]:
        """The closest live, eligible stored memories of each (with their cosine), one
        search per group."""
        out: list[list[tuple[Memory, float]]] = [[] for _ in memories]
        groups: dict[tuple[str, str, int], list[int]] = {}
        for i, m in enumerate(memories):
            groups.setdefault((m.namespace, m.embedding_model, int(m.security_level)), []).append(i)
        for (namespace, model, level), indexes in groups.items():
            flt = MemoryFilter(
                namespace=namespace,
                max_security_level=min(memories[indexes[0]].security_level, scope.clearance),
                not_expired_at=now,
                embedding_model=model or None,
            )
            vectors = unit_queries([memories[i].vector for i in indexes], self._embedder.dimension)
            best = Nearest(self._settings.candidates + 1, self._settings.min_similarity)
            found = await self._store.search_many(scope.partition, vectors, flt, best)
            for i, hits in zip(indexes, found, strict=True):
                out[i] = [
                    (dataclasses.replace(h.memory), h.similarity)
                    for h in hits
                    if int(h.memory.security_level) == level and _eligible(h.memory, memories[i])
                ][: self._settings.candidates]
        return out

    def _closest_earlier(
        self, memories: Sequence[Memory], earlier: list[int], new: Memory
    ) -> list[tuple[int, float]]:
        """The earlier items of the batch closest to ``new`` (as stored candidates are
        chosen: at or above min_similarity, the best ``candidates`` of them)."""
        eligible = [j for j in earlier if _eligible(memories[j], new)]
        if not eligible or new.vector is None:
            return []
        matrix = np.stack([np.asarray(memories[j].vector, dtype=np.float32) for j in eligible])
        sims = matrix @ np.asarray(new.vector, dtype=np.float32)
        order = np.argsort(-sims, kind="stable")[: self._settings.candidates]
        return [
            (eligible[k], float(sims[k])) for k in order if sims[k] >= self._settings.min_similarity
        ]

    async def _with_vectors(
        self, scope: CallScope, touched: list[Memory], now: datetime
    ) -> Related:
        """The stored memories to write, re-read with their vectors, changes applied;
        one changed since it was judged starts the Remember over."""
        if not touched:
            return NOTHING_RELATED
        current = {
            m.id: m
            for m in await self._store.get(
                scope.partition, [m.id for m in touched], with_vectors=True
            )
        }
        out = []
        for changed in touched:
            base = current.get(changed.id)
            if base is None:
                continue  # forgotten meanwhile: leave it be
            if base.version != changed.version:
                raise MemoryWrites.moved()
            out.append(
                dataclasses.replace(
                    base,
                    metadata=changed.metadata,
                    archived=changed.archived,
                    version=next_version(base.version),
                    # A relation alone is not an update of what the memory says.
                    updated_at=now if changed.archived else base.updated_at,
                )
            )
        return Related(out, {m.id: m.version for m in touched if m.id in current})

    # ------------------------------------------------------------------ judging

    async def _verdicts(
        self,
        new: Memory,
        parsed: list[Claim],
        pool: list[_Candidate],
        use_llm: bool,
        known: dict[str, list[Claim]],
    ) -> list[tuple[_Candidate, RelationKind, str]]:
        if use_llm and self._llm is not None:
            try:
                return await self._llm_verdicts(self._llm, new, pool)
            except LLMError as exc:
                report(LLM_COMPONENT, f"{exc.message}; contradictions judged by the rules")
        out = []
        for candidate in pool:
            old = known.get(candidate.memory.id)
            if old is None:
                old = known[candidate.memory.id] = claims(candidate.memory.content)
            judgements = judge(parsed, old)
            for j in judgements:
                if await self._holds(j):
                    out.append((candidate, j.kind, j.reason))
                    break
            else:
                changed = changed_value(new.content, candidate.memory.content)
                if changed is not None:
                    out.append((candidate, RelationKind.SUPERSEDES, changed))
        return out

    async def _holds(self, judgement: Judgement) -> bool:
        """Whether a judgement's "one kind of value" condition holds."""
        if judgement.compare_values is None:
            return True
        old, new = judgement.compare_values
        cjk = same_kind_cjk(old, new)
        if cjk is not None:
            return cjk
        vectors = np.asarray(await self._embedder.embed([old, new], kind="query"))
        return float(vectors[0] @ vectors[1]) >= self._settings.value_similarity

    async def _llm_verdicts(
        self, llm: ChatClient, new: Memory, pool: list[_Candidate]
    ) -> list[tuple[_Candidate, RelationKind, str]]:
        refs = {f"m{i + 1}": c for i, c in enumerate(pool)}
        listing = "\n".join(f"{ref}: {c.memory.content}" for ref, c in refs.items())
        reply = await llm.complete(
            [
                ChatMessage("system", JUDGE_SYSTEM_PROMPT),
                ChatMessage("user", f"NEW: {new.content}\n\nEXISTING:\n{listing}"),
            ]
        )
        out = []
        for item in _judge_answer(reply):
            ref, relation = item.get("ref"), item.get("relation")
            kind = _RELATIONS.get(str(relation))
            if isinstance(ref, str) and ref in refs and kind is not None:
                out.append((refs[ref], kind, "llm"))
        return out


def _judge_answer(reply: str) -> list[dict[str, object]]:
    body = reply.strip().removeprefix("```json").removeprefix("```").removesuffix("```")
    try:
        data = json.loads(body)
    except json.JSONDecodeError as exc:
        raise LLMError(f"contradiction answer is not JSON: {exc.msg}") from None
    if not isinstance(data, list) or not all(isinstance(i, dict) for i in data):
        raise LLMError("contradiction answer is not a JSON array of objects")
    return data


def _eligible(candidate: Memory, new: Memory) -> bool:
    return (
        candidate.id != new.id
        and not candidate.key
        and not candidate.archived
        and PINNED_TAG not in candidate.tags
        and candidate.namespace == new.namespace
        and candidate.security_level == new.security_level
    )
