"""Long-term memory operations: remember, recall, get, list, update, forget."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memoryd.domain import requests
from memoryd.domain.models import Memory
from memoryd.domain.principal import CallScope
from memoryd.observability.tracing import DELETE, SEARCH, UPDATE, UPSERT
from memoryd.operations.definition import Effect, Operation, now_or_as_of
from memoryd.operations.services import Services
from memoryd.security.masked_fields import Kind
from memoryd.service.snapshot.as_of import AsOfReads


@dataclass(frozen=True, slots=True)
class MemoryRef:
    """The input of GetMemory: one memory id."""

    id: str


@dataclass(frozen=True, slots=True)
class MemoryUpdate:
    """The input of UpdateMemory: the memory's id and the fields to change."""

    id: str
    patch: requests.MemoryPatch


@dataclass(frozen=True, slots=True)
class MemoryIds:
    """The input of ForgetMemories: the ids to delete."""

    ids: tuple[str, ...]


async def _remember_batch(
    s: Services, scope: CallScope, drafts: Sequence[requests.MemoryDraft]
) -> list[requests.RememberOutcome]:
    return await s.memories.remember_batch(scope, drafts)


REMEMBER: Operation[requests.MemoryDraft, requests.RememberOutcome] = Operation(
    name="MemoryService.Remember",
    effect=Effect.WRITE,
    genai=UPSERT,
    run=lambda s, scope, draft: s.memories.remember(scope, draft),
    touched_out=lambda o: ((o.memory.id,), ""),
    audit_in_log=True,
)
REMEMBER_BATCH: Operation[Sequence[requests.MemoryDraft], list[requests.RememberOutcome]] = (
    Operation(
        name="MemoryService.RememberBatch",
        effect=Effect.WRITE,
        genai=UPSERT,
        run=_remember_batch,
        touched_out=lambda out: ([o.memory.id for o in out], ""),
        count=lambda drafts, _: len(drafts),
        audit_in_log=True,
    )
)
RECALL: Operation[requests.RecallQuery, requests.RecallOutcome] = Operation(
    name="MemoryService.Recall",
    effect=Effect.READ,
    genai=SEARCH,
    run=now_or_as_of(lambda s, scope, query: s.memories.recall(scope, query), AsOfReads.recall),
    returned=lambda o: [r.memory.id for r in o.results],
    count=lambda _, o: len(o.results),
    own_degraded=lambda o: o.degraded,
)
GET_MEMORY: Operation[MemoryRef, Memory] = Operation(
    name="MemoryService.GetMemory",
    effect=Effect.READ,
    genai=SEARCH,
    run=lambda s, scope, ref: s.memories.get(scope, ref.id),
    touched_in=lambda ref: ((ref.id,) if ref.id else (), ""),
    returned=lambda m: (m.id,),
)
LIST_MEMORIES: Operation[requests.ListQuery, requests.MemoryPage] = Operation(
    name="MemoryService.ListMemories",
    effect=Effect.READ,
    genai=SEARCH,
    run=lambda s, scope, query: s.memories.list_memories(scope, query),
    count=lambda _, page: len(page.memories),
)
UPDATE_MEMORY: Operation[MemoryUpdate, Memory] = Operation(
    name="MemoryService.UpdateMemory",
    effect=Effect.WRITE,
    genai=UPDATE,
    run=lambda s, scope, update: s.memories.update(scope, update.id, update.patch),
    touched_in=lambda u: ((u.id,) if u.id else (), ""),
    touched_out=lambda m: ((m.id,), ""),
    audit_in_log=True,
)
FORGET_MEMORIES: Operation[MemoryIds, list[str]] = Operation(
    name="MemoryService.ForgetMemories",
    # Deletes exactly the ids it names.
    effect=Effect.WRITE,
    genai=DELETE,
    run=lambda s, scope, ids: s.memories.forget(scope, list(ids.ids)),
    touched_in=lambda i: (i.ids, ""),
    touched_out=lambda forgotten: (forgotten, ""),
    count=lambda i, _: len(i.ids),
    outcome_kind=Kind.KEEP,  # the ids forgotten
    audit_in_log=True,
)

OPERATIONS = (
    REMEMBER,
    REMEMBER_BATCH,
    RECALL,
    GET_MEMORY,
    LIST_MEMORIES,
    UPDATE_MEMORY,
    FORGET_MEMORIES,
)
