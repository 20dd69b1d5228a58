"""Long-term memory: remember, recall, get, list, update, forget."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from google.protobuf import field_mask_pb2

from memoryd_client import requests as rq
from memoryd_client.core import Unary
from memoryd_client.errors import invalid_argument
from memoryd_client.results import (
    Memory,
    Page,
    Recalled,
    Remembered,
    degradations,
    recall_hit,
)
from memoryd_proto.v1 import common_pb2, memory_service_pb2

#: Fields UpdateMemory may replace, with the Memory field each maps to.
UPDATABLE = (
    "content",
    "memory_type",
    "tags",
    "security_level",
    "importance",
    "confidence",
    "namespace",
    "metadata",
    "expires_at",
    "archived",
)


def remember(
    agent_id: str,
    content: str,
    *,
    memory_type: rq.EnumArg = "fact",
    tags: rq.StrSeq = (),
    importance: float | None = None,
    namespace: str = "",
    metadata: rq.JsonObjectArg | None = None,
    security_level: rq.EnumArg | None = None,
    embedding: Sequence[float] | None = None,
    session_id: str = "",
    sequence: int = 0,
) -> Unary[Remembered]:
    """Store one memory (a near-duplicate updates the existing one: ``deduplicated``).
    ``metadata`` as :class:`~memoryd_client.JsonText` is stored as written.
    ``session_id`` and ``sequence``: the conversation the memory comes from and its
    turn number there (kept in metadata as ``session_id`` and ``seq``), by which
    ``recall(context_window=...)`` adds a hit's neighbouring turns.

    Not idempotent: not retried on UNAVAILABLE unless the client has ``retry_writes``.
    """
    request = rq.remember_request(
        agent_id,
        content,
        memory_type=memory_type,
        tags=tags,
        importance=importance,
        namespace=namespace,
        metadata=metadata,
        security_level=security_level,
        embedding=embedding,
        session_id=session_id,
        sequence=sequence,
    )
    return Unary("memory", "Remember", request, _remembered, idempotent=False)


def _remembered(r: memory_service_pb2.RememberResponse) -> Remembered:
    return Remembered(Memory.from_pb(r.memory), r.deduplicated, degradations(r.degraded))


def remember_batch(agent_id: str, items: Iterable[rq.BatchItem]) -> Unary[list[Remembered]]:
    """Store many memories in one durable write; results in request order. Items are
    contents, dicts of ``remember``'s keywords, or ``RememberRequest``s."""
    request = rq.remember_batch_request(agent_id, items)
    return Unary("memory", "RememberBatch", request, _batch, idempotent=False)


def _batch(r: memory_service_pb2.RememberBatchResponse) -> list[Remembered]:
    degraded = degradations(r.degraded)
    return [Remembered(Memory.from_pb(x.memory), x.deduplicated, degraded) for x in r.results]


def recall(
    agent_id: str,
    query: str,
    *,
    limit: int = 10,
    namespace: str | None = None,
    tags: rq.StrSeq = (),
    memory_types: Iterable[rq.EnumArg] = (),
    scoring: rq.ScoringArg | None = None,
    hybrid: bool | None = None,
    min_score: float = 0.0,
    query_embedding: Sequence[float] | None = None,
    min_relevance: float = 0.0,
    trust: Iterable[rq.EnumArg] | None = None,
    trust_unattributed: bool = False,
    context_window: int | None = None,
    as_of: rq.AsOfArg | None = None,
) -> Unary[Recalled]:
    """The best matches for ``query``, best first, with score components and each
    one's relevance (0..1, comparable across queries).

    ``scoring``: ``"similarity"``, ``"decayed"``, ``"weighted"`` or a ``Scoring``;
    ``hybrid``: fuse full-text and vector rankings (None: the daemon's default);
    ``min_relevance``: leave out hits less relevant than this (0: none left out);
    ``trust``: only memories of these provenance kinds (``["user"]``: user-stated
    only), and with ``trust_unattributed`` those remembered without a source too;
    None: any provenance (the store fills ``limit`` from what it admits);
    ``context_window``: add the turns this many steps either side of the best hit,
    from its session (0..5; they count against ``limit``; None: the daemon's default).
    ``as_of``: recall as of a past time or log position (docs/as-of.md).
    """
    request = rq.recall_request(
        agent_id,
        query,
        limit=limit,
        namespace=namespace,
        tags=tags,
        memory_types=memory_types,
        scoring=scoring,
        query_embedding=query_embedding,
    )
    if hybrid is not None:
        request.hybrid = hybrid
    request.min_score = float(min_score)
    request.min_relevance = float(min_relevance)
    if trust is not None:
        request.trust.CopyFrom(rq.trust_filter(trust, trust_unattributed))
    if context_window is not None:
        request.context_window = context_window
    rq.set_as_of(request, as_of)
    return Unary("memory", "Recall", request, _recalled, idempotent=True)


def _recalled(r: memory_service_pb2.RecallResponse) -> Recalled:
    return Recalled(
        tuple(recall_hit(x) for x in r.results), r.embedding_model, degradations(r.degraded)
    )


def get(agent_id: str, id: str) -> Unary[Memory]:
    """One memory by id; ``NotFoundError`` when there is none (or it is not yours)."""
    return Unary(
        "memory",
        "GetMemory",
        rq.get_request(agent_id, id),
        lambda r: Memory.from_pb(r.memory),
        idempotent=True,
    )


def list_memories(
    agent_id: str,
    *,
    page_size: int = 50,
    page_token: str = "",
    namespace: str | None = None,
    tags: rq.StrSeq = (),
    memory_types: Iterable[rq.EnumArg] = (),
    include_archived: bool = False,
    order: rq.EnumArg = "created_desc",
) -> Unary[Page[Memory]]:
    """One page of memories, newest first (``order``: "created_asc",
    "access_count_desc", "importance_desc"); follow ``next_page_token`` ("" at the end)."""
    request = rq.list_request(
        agent_id,
        page_size=page_size,
        page_token=page_token,
        namespace=namespace,
        tags=tags,
        memory_types=memory_types,
    )
    request.include_archived = include_archived
    request.order = rq.enum_value(  # type: ignore[assignment]
        order, memory_service_pb2.MemoryOrder, "MEMORY_ORDER_", "order"
    )
    return Unary("memory", "ListMemories", request, _page, idempotent=True)


def _page(r: memory_service_pb2.ListMemoriesResponse) -> Page[Memory]:
    return Page(tuple(Memory.from_pb(m) for m in r.memories), r.next_page_token)


def update(
    agent_id: str,
    id: str,
    *,
    if_version: int | None = None,
    **changes: Any,
) -> Unary[Memory]:
    """Replace the given fields of a memory (``content=...``, ``tags=[...]``,
    ``archived=True``, ...; see ``UPDATABLE``). With ``if_version`` the update fails
    with ``FailedPreconditionError`` unless the memory is still at that version, which
    also makes it safe to retry."""
    unknown = sorted(set(changes) - set(UPDATABLE))
    if unknown:
        raise invalid_argument(unknown[0], f"cannot be updated; one of {', '.join(UPDATABLE)}")
    if not changes:
        raise invalid_argument("update_mask", "name at least one field to update")
    memory = common_pb2.Memory(id=id)
    for name, value in changes.items():
        _set_field(memory, name, value)
    request = memory_service_pb2.UpdateMemoryRequest(
        agent_id=agent_id,
        memory=memory,
        update_mask=field_mask_pb2.FieldMask(paths=sorted(changes)),
    )
    if if_version is not None:
        request.if_version = if_version
    return Unary(
        "memory",
        "UpdateMemory",
        request,
        lambda r: Memory.from_pb(r.memory),
        idempotent=if_version is not None,
    )


def _set_field(memory: common_pb2.Memory, name: str, value: Any) -> None:
    if name == "memory_type":
        memory.memory_type = rq.memory_type_value(value)
    elif name == "security_level":
        memory.security_level = rq.security_level_value(value)
    elif name == "tags":
        memory.tags.extend([value] if isinstance(value, str) else list(value))
    elif name == "metadata":
        memory.metadata_json = rq.json_text(value, "metadata", object_only=True)
    elif name == "expires_at":
        if not isinstance(value, datetime):
            raise invalid_argument("expires_at", "must be a datetime")
        memory.expires_at.CopyFrom(rq.timestamp(value, "expires_at"))
    else:
        setattr(memory, name, value)


def forget(agent_id: str, ids: rq.StrSeq) -> Unary[list[str]]:
    """Delete memories; returns the ids that existed. Safe to retry (deleting twice
    leaves the same state; a retried call may report fewer ids)."""
    return Unary(
        "memory",
        "ForgetMemories",
        rq.forget_request(agent_id, ids),
        lambda r: list(r.forgotten_ids),
        idempotent=True,
    )
