"""Consolidation: related older memories condensed into one, without losing any.

Eligible: live (not archived, not expired), not keyed (a slot owns it), not pinned,
neither updated nor accessed for ``min_age_days``, at or below the caller's clearance.
They are grouped within one namespace and security level: by tag first (largest
groups first, each memory in one group), then the rest by similarity (greedy
clusters at cosine >= ``cluster_similarity``, the oldest memory seeding each). Groups
of ``min_group_size`` or more are condensed, ``max_group_size`` memories at a time:

- with an LLM (configured, ``use_llm``): a summary that must keep every fact,
  preference, name, number and date;
- otherwise, or when the LLM fails (said in ``degraded``): a deterministic merge
  (condense.py): near-identical statements once, a value a later memory changed
  dropped, statements sharing their first words folded; a merge too long for one
  memory is split into several.

With ``by_type`` (maintenance.compression, the layered-memory design's policy) the
groups are the memory types instead, only memories accessed fewer than
``max_access_count`` times are eligible, and a group becomes up to ``max_parts``
derived memories, one per subject or set of subjects.

The derived memory gets the group's tags (plus "consolidated"), its highest
importance, summed access counts, the earliest creation time, provenance "system /
consolidation", ``derived_from`` = the originals and a ``derived_from`` relation to each.
The originals are archived with ``superseded_by`` = the derived memory and a
``consolidated_into`` relation, in the same conditional write: a member changed since
the grouping is left out, and a change landing meanwhile makes the group condense
again from what is stored (service/common/memory_writes.py). Restore with ``undo_consolidation``
brings them back and archives the derived memory. A dry run reports the same groups
and contents and writes nothing.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections import Counter
from collections.abc import AsyncIterator, Mapping, Sequence
from datetime import datetime, timedelta

import numpy as np

from memoryd.config import ConsolidationSettings
from memoryd.domain.lifecycle import (
    ConsolidatedGroup,
    ConsolidateOptions,
    ConsolidateResult,
    Progress,
)
from memoryd.domain.limits import next_version
from memoryd.domain.models import (
    Memory,
    MemoryFilter,
    Partition,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
)
from memoryd.domain.relations import (
    DERIVED_FROM_KEY,
    SUPERSEDED_BY_KEY,
    RelationKind,
    derived_from,
    link,
    restored,
)
from memoryd.domain.requests import Degradation
from memoryd.domain.snapshot import PINNED_TAG
from memoryd.resilience.embedder import embed_in_space
from memoryd.service.common import scanning
from memoryd.service.common.llm import LLM_COMPONENT, ChatMessage, LLMError
from memoryd.service.common.memory_writes import Change, Changes
from memoryd.service.lifecycle.bulk import LifecycleDeps
from memoryd.service.lifecycle.condense import condense

CONSOLIDATED_TAG = "consolidated"
#: Metadata of a derived memory: how it was made (and, once undone, when).
CONSOLIDATION_KEY = "memoryd:consolidation"
SOURCE_NAME = "consolidation"
#: Groups listed in a result.
MAX_DETAILS = 100
SUMMARY_PROMPT = (
    "You condense an AI agent's long-term memories. Merge the numbered memories into one "
    "memory that keeps every fact, preference, name, number and date they contain; drop "
    "only repetition. Answer with the merged memory text only."
)

_GroupKey = tuple[str, SecurityLevel]


@dataclasses.dataclass(slots=True)
class _Group:
    label: str
    members: list[Memory]


class Consolidator:
    def __init__(self, deps: LifecycleDeps) -> None:
        self._deps = deps

    @property
    def settings(self) -> ConsolidationSettings:
        return self._deps.settings.consolidation

    async def run(
        self, partition: Partition, ceiling: SecurityLevel, options: ConsolidateOptions
    ) -> AsyncIterator[Progress | ConsolidateResult]:
        s = self.settings
        now = self._deps.clock()
        min_age = s.min_age_days if options.min_age_days is None else options.min_age_days
        min_size = options.min_group_size or s.min_group_size
        yield Progress("consolidate", message="finding groups of older memories")
        eligible = await self._eligible(partition, ceiling, now - timedelta(days=min_age))
        if options.max_access_count is not None:
            eligible = [m for m in eligible if m.access_count < options.max_access_count]
        if options.by_type:
            found = _by_type(eligible)
        else:
            found = await self._groups(partition, eligible, options.tags, min_size)
        max_parts = options.max_parts or 1
        groups = [g for g in found if len(g.members) >= min_size]
        details: list[ConsolidatedGroup] = []
        degraded: list[Degradation] = []
        consolidated = 0
        for i, group in enumerate(groups):
            for chunk in _chunks(group.members, s.max_group_size):
                for made in await self._condense(
                    partition, group.label, chunk, now, (options.dry_run, max_parts), degraded
                ):
                    details.append(made)
                    consolidated += len(made.source_ids)
            yield Progress("consolidate", i + 1, len(groups), group.label)
            await scanning.pause()
        yield ConsolidateResult(
            groups=len(details),
            consolidated=consolidated,
            dry_run=options.dry_run,
            details=tuple(details[:MAX_DETAILS]),
            degraded=tuple(dict.fromkeys(degraded)),
        )

    async def crowded_tags(
        self, partition: Partition, ceiling: SecurityLevel, threshold: int
    ) -> tuple[str, ...]:
        """The tags of groups (one namespace and level) with more than ``threshold``
        eligible memories of any age: maintenance's tag compaction condenses them."""
        eligible = await self._eligible(partition, ceiling, self._deps.clock())
        counts = Counter(
            (m.namespace, m.security_level, tag)
            for m in eligible
            for tag in set(m.tags)
            if tag != CONSOLIDATED_TAG
        )
        return tuple(sorted({tag for (_, _, tag), n in counts.items() if n > threshold}))

    # ------------------------------------------------------------------ grouping

    async def _eligible(
        self, partition: Partition, ceiling: SecurityLevel, cutoff: datetime
    ) -> list[Memory]:
        flt = MemoryFilter(max_security_level=ceiling, not_expired_at=self._deps.clock())
        out = []
        async for page in scanning.scan(self._deps.store, partition, flt):
            for m in page:
                last = max(m.updated_at, m.accessed_at) if m.accessed_at else m.updated_at
                if not m.key and PINNED_TAG not in m.tags and last < cutoff:
                    out.append(m)
        return out

    async def _groups(
        self, partition: Partition, memories: list[Memory], only_tags: Sequence[str], min_size: int
    ) -> list[_Group]:
        by_tag: dict[tuple[_GroupKey, str], list[Memory]] = {}
        for m in memories:
            for tag in m.tags:
                if tag != CONSOLIDATED_TAG and (not only_tags or tag in only_tags):
                    by_tag.setdefault(((m.namespace, m.security_level), tag), []).append(m)
        assigned: set[str] = set()
        groups = []
        # Largest tag groups first; each memory joins one group.
        for (_, tag), members in sorted(by_tag.items(), key=lambda kv: (-len(kv[1]), kv[0][1])):
            free = [m for m in members if m.id not in assigned]
            if len(free) >= min_size:
                assigned.update(m.id for m in free)
                groups.append(_Group(f"tag:{tag}", free))
        if not only_tags:
            rest = [m for m in memories if m.id not in assigned]
            groups.extend(await self._clusters(partition, rest))
        return groups

    async def _clusters(self, partition: Partition, memories: list[Memory]) -> list[_Group]:
        """Greedy similarity clusters within each (namespace, level), oldest first."""
        s = self.settings
        oldest = sorted(memories, key=lambda m: (m.created_at, m.id))[: s.max_cluster_candidates]
        if len(oldest) < 2:
            return []
        with_vectors = await self._deps.store.get(
            partition, [m.id for m in oldest], with_vectors=True
        )
        by_key: dict[_GroupKey, list[Memory]] = {}
        for m in with_vectors:
            if m.vector is not None:
                by_key.setdefault((m.namespace, m.security_level), []).append(m)
        groups = []
        for members in by_key.values():
            members.sort(key=lambda m: (m.created_at, m.id))
            matrix = np.stack([np.asarray(m.vector, dtype=np.float32) for m in members])
            free = np.ones(len(members), dtype=bool)
            for i in range(len(members)):
                if not free[i]:
                    continue
                near = np.flatnonzero(free & (matrix @ matrix[i] >= s.cluster_similarity))
                if len(near) >= 2:
                    free[near] = False
                    groups.append(_Group("cluster", [members[j] for j in near]))
        return groups

    # ------------------------------------------------------------------ condensing

    async def _condense(
        self,
        partition: Partition,
        label: str,
        members: list[Memory],
        now: datetime,
        how: tuple[bool, int],
        degraded: list[Degradation],
    ) -> list[ConsolidatedGroup]:
        """The derived memories of ``members`` (``how``: dry run, parts at most; more
        when a condensed part is too long for one memory)."""
        dry_run, max_parts = how
        members = sorted(members, key=lambda m: (m.created_at, m.id))
        if not dry_run:
            return await self._write(partition, label, members, now, max_parts, degraded)
        return [
            ConsolidatedGroup(label, tuple(m.id for m in part), content, method, "")
            for part, content, method in await self._parts(members, max_parts, degraded)
        ]

    async def _parts(
        self, members: list[Memory], max_parts: int, degraded: list[Degradation]
    ) -> list[tuple[list[Memory], str, str]]:
        """(members, text, method) of each derived memory ``members`` condense into."""
        text, method = await self._summary(members, degraded)
        if text is None:
            return [
                (part, content, method)
                for part, content in self._condensed_parts(members, max_parts)
            ]
        return [(members, text, method)]

    def _condensed_parts(
        self, members: list[Memory], max_parts: int
    ) -> list[tuple[list[Memory], str]]:
        """``members`` condensed (condense.py), halved until every part fits in one
        memory."""
        limit = self._deps.limits.max_content_bytes
        parts = condense(members, max_parts)
        if len(members) == 1 or all(len(p.text.encode()) <= limit for p in parts):
            return [(p.members, p.text) for p in parts]
        half = len(members) // 2
        return [
            *self._condensed_parts(members[:half], max_parts),
            *self._condensed_parts(members[half:], max_parts),
        ]

    async def _summary(
        self, members: list[Memory], degraded: list[Degradation]
    ) -> tuple[str | None, str]:
        """The LLM's summary and "llm"; (None, "merge") without one or when it fails."""
        llm = self._deps.llm
        if llm is None or not self.settings.use_llm:
            return None, "merge"
        listing = "\n".join(f"{i + 1}. {m.content}" for i, m in enumerate(members))
        try:
            reply = await llm.complete(
                [ChatMessage("system", SUMMARY_PROMPT), ChatMessage("user", listing)]
            )
        except LLMError as exc:
            degraded.append(Degradation(LLM_COMPONENT, f"{exc.message}; merged deterministically"))
            return None, "merge"
        if len(reply.encode()) > self._deps.limits.max_content_bytes:
            degraded.append(
                Degradation(LLM_COMPONENT, "summary longer than a memory; merged deterministically")
            )
            return None, "merge"
        return reply, "llm"

    async def _write(
        self,
        partition: Partition,
        label: str,
        members: list[Memory],
        now: datetime,
        max_parts: int,
        degraded: list[Degradation],
    ) -> list[ConsolidatedGroup]:
        """The derived memories and the originals archived, in one conditional write
        (service/common/memory_writes.py), condensed from the originals as stored: one
        changed since the grouping is left out (it is no longer old), one archived or
        forgotten too; a change landing meanwhile makes it condense them again."""
        seen = {m.id: m.version for m in members}
        made: list[ConsolidatedGroup] = []

        async def condense(current: Mapping[str, Memory]) -> Changes:
            made.clear()
            sources = [
                current[i]
                for i in seen
                if i in current and current[i].version == seen[i] and not current[i].archived
            ]
            if not sources:
                return Changes()
            writes: list[Memory] = []
            max_tags = self._deps.limits.max_tags
            for part, content, method in await self._parts(sources, max_parts, degraded):
                derived = await self._embedded(
                    _derived(partition, label, part, content, method, now, max_tags)
                )
                for source in part:
                    link(derived, source, RelationKind.DERIVED_FROM, now, "consolidation", 1.0)
                    source.metadata = {**source.metadata, SUPERSEDED_BY_KEY: derived.id}
                    source.archived = True
                    source.version = next_version(source.version)
                    source.updated_at = now
                writes += [derived, *part]
                ids = tuple(m.id for m in part)
                made.append(ConsolidatedGroup(label, ids, content, method, derived.id))
            return Changes(writes)

        await self._deps.writes.modify(partition, list(seen), condense)
        return made

    async def _embedded(self, derived: Memory) -> Memory:
        """``derived`` with its content's vector (in the space it was embedded in)."""
        embedder = self._deps.embedder
        vectors, space = await embed_in_space(embedder, [derived.content])
        derived.vector = vectors[0]
        derived.embedding_model = space
        derived.embedding_dimension = embedder.dimension
        return derived


def _derived(
    partition: Partition,
    label: str,
    members: list[Memory],
    content: str,
    method: str,
    now: datetime,
    max_tags: int,
) -> Memory:
    types = Counter(m.memory_type for m in members)
    accessed = [m.accessed_at for m in members if m.accessed_at is not None]
    own = dict.fromkeys(t for m in members for t in m.tags if t != CONSOLIDATED_TAG)
    tags = [*list(own)[: max(0, max_tags - 1)], CONSOLIDATED_TAG][:max_tags]
    return Memory(
        id=str(uuid.uuid4()),
        tenant_id=partition.tenant_id,
        agent_id=partition.agent_id,
        namespace=members[0].namespace,
        content=content,
        memory_type=types.most_common(1)[0][0],
        tags=tuple(tags),
        security_level=members[0].security_level,
        importance=max(m.importance for m in members),
        confidence=min(m.confidence for m in members),
        source=Provenance(ProvenanceKind.SYSTEM, SOURCE_NAME, now, label),
        metadata={
            DERIVED_FROM_KEY: [m.id for m in members],
            CONSOLIDATION_KEY: {"method": method, "group": label, "at": now.isoformat()},
        },
        created_at=min(m.created_at for m in members),
        updated_at=now,
        accessed_at=max(accessed) if accessed else None,
        access_count=sum(m.access_count for m in members),
    )


async def undo(
    deps: LifecycleDeps, partition: Partition, ceiling: SecurityLevel, ids: Sequence[str]
) -> tuple[int, int]:
    """Undo the consolidations of the derived memories ``ids``: their originals come
    back (no longer superseded) and they are archived, each derived memory with its
    originals in one conditional write. Returns (derived memories undone, originals
    restored)."""
    now = deps.clock()
    undone = restored_count = 0
    for memory in await deps.store.get(partition, list(dict.fromkeys(ids))):
        if not _undoable(memory, ceiling):
            continue
        written = await deps.writes.modify(
            partition, [memory.id, *derived_from(memory.metadata)], _undo(memory.id, ceiling, now)
        )
        if written:
            undone += 1
            restored_count += len(written.upserts) - 1
    return undone, restored_count


def _undoable(memory: Memory, ceiling: SecurityLevel) -> bool:
    return (
        CONSOLIDATION_KEY in memory.metadata
        and not memory.archived
        and memory.security_level <= ceiling
    )


def _undo(derived_id: str, ceiling: SecurityLevel, now: datetime) -> Change:
    """The change undoing one consolidation, from the memories as stored."""

    async def change(current: Mapping[str, Memory]) -> Changes:
        memory = current.get(derived_id)
        if memory is None or not _undoable(memory, ceiling):
            return Changes()
        back = [
            dataclasses.replace(
                s,
                archived=False,
                metadata=restored(s.metadata),
                version=next_version(s.version),
                updated_at=now,
            )
            for i in derived_from(memory.metadata)
            if (s := current.get(i)) is not None and s.archived and s.security_level <= ceiling
        ]
        record = {**memory.metadata[CONSOLIDATION_KEY], "undone_at": now.isoformat()}
        retired = dataclasses.replace(
            memory,
            archived=True,
            metadata={**memory.metadata, CONSOLIDATION_KEY: record},
            version=next_version(memory.version),
            updated_at=now,
        )
        return Changes([retired, *back])

    return change


def _by_type(memories: list[Memory]) -> list[_Group]:
    """One group per memory type within each namespace and security level."""
    groups: dict[tuple[str, SecurityLevel, str], list[Memory]] = {}
    for m in memories:
        groups.setdefault((m.namespace, m.security_level, m.memory_type.value), []).append(m)
    return [_Group(f"type:{key[2]}", members) for key, members in sorted(groups.items())]


def _chunks(members: list[Memory], size: int) -> list[list[Memory]]:
    ordered = sorted(members, key=lambda m: (m.created_at, m.id))
    return [ordered[i : i + size] for i in range(0, len(ordered), size)]
