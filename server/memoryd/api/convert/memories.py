"""Long-term memories: Remember, Recall, Get, List, Update, Forget messages."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from google.protobuf.message import Message

from memoryd.api.convert.common import (
    MEMORY_ORDERS,
    MEMORY_TYPES,
    RECENCY_BASES,
    REVERSE_MEMORY_TYPES,
    SCORING_PRESETS,
    SECURITY_LEVELS,
    TAG_MATCHES,
    add_each,
    as_of_from,
    dict_to_struct,
    enum_list,
    enum_value,
    json_object,
    provenance_from,
    set_provenance,
    set_timestamp,
    struct_to_dict,
    timestamp_from,
    trust_from,
    vector_from,
)
from memoryd.domain import requests
from memoryd.domain.errors import FieldViolation, InvalidArgument
from memoryd.domain.models import (
    Memory,
    MemoryFilter,
    MemoryOrder,
    MemoryType,
    SecurityLevel,
    TagMatch,
    TrustFilter,
)
from memoryd.domain.relations import RelationKind, derived_from, relations_of, superseded_by
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb

_RELATION_KINDS = {
    kind: pb.RelationKind.Value(f"RELATION_KIND_{kind.name}") for kind in RelationKind
}

# ---------------------------------------------------------------- requests


def _metadata_from(msg: Message, prefix: str) -> tuple[dict[str, Any], str]:
    """metadata_json (kept as written) or metadata (a Struct: numbers are doubles),
    and the text ("" for a Struct)."""
    found = json_object(msg, "metadata_json", "metadata", prefix)  # checked either way
    if found is None:
        return {}, ""
    if msg.HasField("metadata"):  # its numbers stay the doubles the Struct held
        return struct_to_dict(msg, "metadata", f"{prefix}metadata"), ""
    return found.members, found.text


def draft_from(req: mpb.RememberRequest, prefix: str = "") -> requests.MemoryDraft:
    """A Remember request (or a batch item, fields prefixed by ``prefix``) as a memory draft."""
    memory_type = enum_value(
        req.memory_type, MEMORY_TYPES, f"{prefix}memory_type", default=MemoryType.FACT
    )
    assert memory_type is not None
    metadata, metadata_json = _metadata_from(req, prefix)
    return requests.MemoryDraft(
        content=req.content,
        memory_type=memory_type,
        tags=tuple(req.tags),
        security_level=enum_value(req.security_level, SECURITY_LEVELS, f"{prefix}security_level"),
        importance=req.importance if req.HasField("importance") else None,
        confidence=req.confidence if req.HasField("confidence") else None,
        namespace=req.namespace,
        metadata=metadata,
        metadata_json=metadata_json,
        source=provenance_from(req, "source", f"{prefix}source"),
        expires_at=timestamp_from(req, "expires_at", f"{prefix}expires_at"),
        created_at=timestamp_from(req, "created_at", f"{prefix}created_at"),
        occurred_at=timestamp_from(req, "occurred_at", f"{prefix}occurred_at"),
        embedding=vector_from(req.embedding),
        session_id=req.session_id,
        sequence=req.sequence,
    )


def batch_drafts_from(req: mpb.RememberBatchRequest) -> list[requests.MemoryDraft]:
    """Every item of a RememberBatch request as a draft; each item's errors name it
    (``items[3].content``)."""
    violations = [
        FieldViolation(f"items[{i}].agent_id", "must be empty or equal to the batch's agent_id")
        for i, item in enumerate(req.items)
        if item.agent_id and item.agent_id != req.agent_id
    ]
    if violations:
        raise InvalidArgument(violations)
    return [draft_from(item, f"items[{i}].") for i, item in enumerate(req.items)]


def _filter_from(
    req: Any, *, has_archived: bool = True, trust: TrustFilter | None = None
) -> MemoryFilter:
    level = enum_value(
        req.max_security_level,
        SECURITY_LEVELS,
        "max_security_level",
        default=SecurityLevel.RESTRICTED,
    )
    tag_match = enum_value(req.tag_match, TAG_MATCHES, "tag_match", default=TagMatch.ANY)
    assert level is not None and tag_match is not None
    created_after = timestamp_from(req, "created_after")
    created_before = timestamp_from(req, "created_before")
    if created_after and created_before and created_after >= created_before:
        raise InvalidArgument.field("created_after", "must be before created_before")
    return MemoryFilter(
        namespace=req.namespace if req.HasField("namespace") else None,
        tags=tuple(req.tags),
        tag_match=tag_match,
        memory_types=enum_list(req.memory_types, MEMORY_TYPES, "memory_types"),
        max_security_level=level,
        created_after=created_after,
        created_before=created_before,
        include_archived=req.include_archived if has_archived else False,
        trust=trust,
    )


def recall_query_from(req: mpb.RecallRequest) -> requests.RecallQuery:
    """A Recall request as a query: text or vector, filters, scoring and time."""
    scoring = requests.Scoring()
    if req.HasField("scoring"):
        s = req.scoring
        scoring = requests.Scoring(
            preset=enum_value(s.preset, SCORING_PRESETS, "scoring.preset"),
            half_life_hours=s.half_life_hours if s.HasField("half_life_hours") else None,
            similarity_weight=s.similarity_weight if s.HasField("similarity_weight") else None,
            recency_weight=s.recency_weight if s.HasField("recency_weight") else None,
            importance_weight=s.importance_weight if s.HasField("importance_weight") else None,
            recency_basis=enum_value(s.recency_basis, RECENCY_BASES, "scoring.recency_basis"),
        )
    return requests.RecallQuery(
        query=req.query,
        embedding=vector_from(req.query_embedding),
        limit=req.limit if req.limit != 0 else None,
        filter=_filter_from(req, trust=trust_from(req)),
        scoring=scoring,
        hybrid=req.hybrid if req.HasField("hybrid") else None,
        min_score=req.min_score or None,
        min_relevance=req.min_relevance or None,
        now=timestamp_from(req, "now"),
        context_window=req.context_window if req.HasField("context_window") else None,
        as_of=as_of_from(req),
    )


def list_query_from(req: mpb.ListMemoriesRequest) -> requests.ListQuery:
    """A ListMemories request as a query: filters, order and paging."""
    order = enum_value(req.order, MEMORY_ORDERS, "order", default=MemoryOrder.CREATED_DESC)
    assert order is not None
    return requests.ListQuery(
        filter=_filter_from(req),
        order=order,
        page_size=req.page_size if req.page_size != 0 else None,
        page_token=req.page_token,
    )


def patch_from(req: mpb.UpdateMemoryRequest) -> requests.MemoryPatch:
    """The fields an UpdateMemory request's update_mask names, as a patch (INVALID_ARGUMENT for
    an empty or unknown path)."""
    paths = list(req.update_mask.paths)
    if not paths:
        raise InvalidArgument.field("update_mask", "must name at least one field")
    unknown = [p for p in paths if p not in requests.UPDATABLE_FIELDS]
    if unknown:
        raise InvalidArgument.field(
            "update_mask",
            f"cannot update {', '.join(unknown)}; updatable: {', '.join(sorted(requests.UPDATABLE_FIELDS))}",
        )
    m = req.memory
    values: dict[str, Any] = {
        "content": m.content,
        "tags": tuple(m.tags),
        "importance": m.importance,
        "confidence": m.confidence,
        "namespace": m.namespace,
        "archived": m.archived,
    }
    fields = frozenset(paths)
    if "memory_type" in fields:
        values["memory_type"] = enum_value(
            m.memory_type, MEMORY_TYPES, "memory.memory_type", default=MemoryType.FACT
        )
    if "security_level" in fields:
        level = enum_value(m.security_level, SECURITY_LEVELS, "memory.security_level")
        if level is None:
            raise InvalidArgument.field("memory.security_level", "must be set when in update_mask")
        values["security_level"] = level
    metadata_json = ""
    if "metadata" in fields:  # from metadata_json when set
        values["metadata"], metadata_json = _metadata_from(m, "memory.")
    if "source" in fields:
        values["source"] = provenance_from(m, "source", "memory.source")
    if "expires_at" in fields:
        values["expires_at"] = timestamp_from(m, "expires_at", "memory.expires_at")
    if "occurred_at" in fields:  # unset clears it (the event time becomes unknown)
        values["occurred_at"] = timestamp_from(m, "occurred_at", "memory.occurred_at")
    return requests.MemoryPatch(
        fields=fields,
        values={k: v for k, v in values.items() if k in fields},
        if_version=req.if_version if req.HasField("if_version") else None,
        embedding=vector_from(req.embedding),
        metadata_json=metadata_json,
    )


# ---------------------------------------------------------------- responses


def memory_to_proto(m: Memory, out: pb.Memory | None = None) -> pb.Memory:
    """``m`` as a wire Memory (into ``out`` when given), every field of the contract."""
    msg = pb.Memory() if out is None else out
    msg.id = m.id
    msg.tenant_id = m.tenant_id
    msg.agent_id = m.agent_id
    msg.namespace = m.namespace
    msg.content = m.content
    msg.memory_type = REVERSE_MEMORY_TYPES[m.memory_type]  # type: ignore[assignment]
    msg.tags.extend(m.tags)
    msg.security_level = int(m.security_level)  # type: ignore[assignment]
    msg.importance = m.importance
    msg.confidence = m.confidence
    if m.source is not None:
        set_provenance(msg.source, m.source)
    if m.metadata:
        dict_to_struct(msg.metadata, m.metadata)
        msg.metadata_json = m.metadata_text()
    set_timestamp(msg.created_at, m.created_at)
    set_timestamp(msg.updated_at, m.updated_at)
    set_timestamp(msg.accessed_at, m.accessed_at)
    set_timestamp(msg.expires_at, m.expires_at)
    set_timestamp(msg.occurred_at, m.occurred_at)
    msg.access_count = m.access_count
    msg.version = m.version
    msg.archived = m.archived
    msg.key = m.key
    msg.embedding_model = m.embedding_model
    msg.embedding_dimension = m.embedding_dimension
    msg.supersedes = m.supersedes
    msg.superseded_by = superseded_by(m.metadata)
    msg.derived_from.extend(derived_from(m.metadata))
    for relation in relations_of(m.metadata):
        r = msg.relations.add(
            kind=_RELATION_KINDS[relation.kind],
            memory_id=relation.memory_id,
            reason=relation.reason,
            strength=relation.strength,
        )
        set_timestamp(r.created_at, relation.created_at)
    return msg


def degraded_to_proto(items: Sequence[requests.Degradation]) -> list[pb.Degradation]:
    """Degradations as wire messages."""
    return [pb.Degradation(component=d.component, reason=d.reason) for d in items]


def remember_response(outcome: requests.RememberOutcome) -> mpb.RememberResponse:
    """The Remember response: the memory stored (or the one a near-duplicate updated)."""
    resp = mpb.RememberResponse(deduplicated=outcome.deduplicated)
    memory_to_proto(outcome.memory, resp.memory)
    return resp


def remember_batch_response(
    outcomes: Sequence[requests.RememberOutcome],
) -> mpb.RememberBatchResponse:
    """The RememberBatch response: one result per item, in order."""
    resp = mpb.RememberBatchResponse()
    for outcome in outcomes:
        result = resp.results.add(deduplicated=outcome.deduplicated)
        memory_to_proto(outcome.memory, result.memory)
    return resp


def _components_to_proto(c: requests.ScoreComponents, out: mpb.ScoreComponents) -> None:
    out.similarity = c.similarity
    out.recency = c.recency
    out.importance = c.importance
    out.decayed = c.decayed
    out.weighted = c.weighted
    out.keyword = c.keyword
    out.fused = c.fused
    out.relevance = c.relevance
    out.temporal = c.temporal


def recall_response(outcome: requests.RecallOutcome) -> mpb.RecallResponse:
    """The Recall response: the scored memories with their score components."""
    resp = mpb.RecallResponse(embedding_model=outcome.embedding_model)
    for scored in outcome.results:
        result = resp.results.add(score=scored.score, relevance=scored.relevance)
        memory_to_proto(scored.memory, result.memory)
        _components_to_proto(scored.components, result.components)
    return resp


def list_response(page: requests.MemoryPage) -> mpb.ListMemoriesResponse:
    """The ListMemories response: a page of memories."""
    resp = mpb.ListMemoriesResponse(next_page_token=page.next_page_token)
    add_each(resp.memories, page.memories, memory_to_proto)
    return resp
