"""MemoryFilter -> Qdrant filter conditions.

Every query, scroll, count and delete of the backend is built with :func:`scoped`,
so the partition (tenant AND agent) is always inside the request, never applied
afterwards. Values travel as typed payload matches, so no string escaping exists
to get wrong. Range bounds are doubles on the wire: microsecond instants are exact
up to 2^53 us (year 2255).
"""

from __future__ import annotations

from collections.abc import Sequence

from qdrant_client import models

from memoryd.domain.models import MemoryFilter, Partition, SecurityLevel, TagMatch, TrustFilter
from memoryd.storage.instants import to_micros
from memoryd.storage.qdrant.schema import AGENT, SOURCE_KIND, TENANT

Condition = models.Condition


def match(key: str, value: str | int | bool) -> models.FieldCondition:
    return models.FieldCondition(key=key, match=models.MatchValue(value=value))


def value_range(
    key: str,
    *,
    gt: int | None = None,
    gte: int | None = None,
    lt: int | None = None,
    lte: int | None = None,
) -> models.FieldCondition:
    return models.FieldCondition(key=key, range=models.Range(gt=gt, gte=gte, lt=lt, lte=lte))


def partition_conditions(partition: Partition) -> list[Condition]:
    return [match(TENANT, partition.tenant_id), match(AGENT, partition.agent_id)]


def has_ids(point_ids: Sequence[str]) -> models.HasIdCondition:
    return models.HasIdCondition(has_id=list(point_ids))


def scoped(partition: Partition, *conditions: Condition) -> models.Filter:
    """The partition AND-ed with ``conditions``."""
    return models.Filter(must=[*partition_conditions(partition), *conditions])


def memory_conditions(flt: MemoryFilter) -> list[Condition]:
    """One condition per constrained field of ``flt`` (all AND-ed by the caller)."""
    out: list[Condition] = []
    if flt.namespace is not None:
        out.append(match("namespace", flt.namespace))
    if flt.tags:
        if flt.tag_match is TagMatch.ALL:
            out.extend(match("tags", t) for t in dict.fromkeys(flt.tags))
        else:
            out.append(models.FieldCondition(key="tags", match=models.MatchAny(any=list(flt.tags))))
    if flt.memory_types:
        kinds = [str(t.value) for t in flt.memory_types]
        out.append(models.FieldCondition(key="memory_type", match=models.MatchAny(any=kinds)))
    if flt.trust is not None:
        out.append(trust_condition(flt.trust))
    if flt.max_security_level < max(SecurityLevel):
        out.append(value_range("security_level", lte=int(flt.max_security_level)))
    if flt.created_after is not None or flt.created_before is not None:
        out.append(
            value_range(
                "created_at",
                gt=None if flt.created_after is None else to_micros(flt.created_after),
                lt=None if flt.created_before is None else to_micros(flt.created_before),
            )
        )
    if not flt.include_archived:
        out.append(match("archived", 0))
    if flt.not_expired_at is not None:
        # Never-expiring memories store a null expires_at, which is_empty matches.
        out.append(
            models.Filter(
                should=[
                    models.IsEmptyCondition(is_empty=models.PayloadField(key="expires_at")),
                    value_range("expires_at", gt=to_micros(flt.not_expired_at)),
                ]
            )
        )
    if flt.embedding_model is not None:
        out.append(match("embedding_model", flt.embedding_model))
    if flt.exclude_embedding_model is not None:
        out.append(models.Filter(must_not=[match("embedding_model", flt.exclude_embedding_model)]))
    return out


def trust_condition(trust: TrustFilter) -> Condition:
    """The provenance kinds ``trust`` admits; a memory without provenance stores a null
    ``source``, which is_empty on its kind matches."""
    should: list[Condition] = []
    if trust.kinds:
        kinds = sorted(k.value for k in trust.kinds)
        should.append(models.FieldCondition(key=SOURCE_KIND, match=models.MatchAny(any=kinds)))
    if trust.unattributed:
        should.append(models.IsEmptyCondition(is_empty=models.PayloadField(key=SOURCE_KIND)))
    if not should:  # admits nothing
        return models.HasIdCondition(has_id=[])
    return models.Filter(should=should)
