"""SQL ``where`` clauses for LanceDB (DataFusion dialect).

Everything user-controlled (ids, tenants, agents, namespaces, tags) goes through
:func:`sql_str`, which doubles single quotes; DataFusion treats backslashes in
string literals literally, so no other escaping is needed. Timestamps are passed
as integer microseconds since the epoch and cast to the column type, which is
exact and independent of any date-string parsing rules.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime

from memoryd.domain.models import (
    MemoryFilter,
    MemoryOrder,
    PageCursor,
    Partition,
    SecurityLevel,
    TagMatch,
    TrustFilter,
)
from memoryd.storage.instants import to_micros

_TS_TYPE = 'Timestamp(Microsecond, Some("UTC"))'


def sql_str(value: str) -> str:
    """A SQL string literal: single-quoted, embedded quotes doubled."""
    return "'" + value.replace("'", "''") + "'"


def sql_str_list(values: Iterable[str]) -> str:
    return ", ".join(sql_str(v) for v in values)


def sql_ts(value: datetime) -> str:
    """A timestamp[us, UTC] literal."""
    return f"arrow_cast({to_micros(value)}, '{_TS_TYPE}')"


def partition_clause(partition: Partition) -> str:
    return (
        f"(tenant_id = {sql_str(partition.tenant_id)} AND agent_id = {sql_str(partition.agent_id)})"
    )


def ids_clause(ids: Sequence[str]) -> str:
    return f"(id IN ({sql_str_list(ids)}))"


def filter_clauses(flt: MemoryFilter) -> list[str]:
    """One parenthesised predicate per constrained field of ``flt``."""
    out: list[str] = []
    if flt.namespace is not None:
        out.append(f"(namespace = {sql_str(flt.namespace)})")
    if flt.tags:
        fn = "array_has_all" if flt.tag_match is TagMatch.ALL else "array_has_any"
        out.append(f"({fn}(tags, [{sql_str_list(flt.tags)}]))")
    if flt.memory_types:
        out.append(f"(memory_type IN ({sql_str_list(str(t.value) for t in flt.memory_types)}))")
    if flt.trust is not None:
        out.append(trust_clause(flt.trust))
    if flt.max_security_level < max(SecurityLevel):
        out.append(f"(security_level <= {int(flt.max_security_level)})")
    if flt.created_after is not None:
        out.append(f"(created_at > {sql_ts(flt.created_after)})")
    if flt.created_before is not None:
        out.append(f"(created_at < {sql_ts(flt.created_before)})")
    if not flt.include_archived:
        out.append("(archived = false)")
    if flt.not_expired_at is not None:
        out.append(f"(expires_at IS NULL OR expires_at > {sql_ts(flt.not_expired_at)})")
    if flt.embedding_model is not None:
        out.append(f"(embedding_model = {sql_str(flt.embedding_model)})")
    if flt.exclude_embedding_model is not None:
        out.append(f"(embedding_model != {sql_str(flt.exclude_embedding_model)})")
    return out


def trust_clause(trust: TrustFilter) -> str:
    """The provenance kinds ``trust`` admits (a memory without one has kind "")."""
    kinds = sorted(k.value for k in trust.kinds) + ([""] if trust.unattributed else [])
    return f"(source_kind IN ({sql_str_list(kinds)}))" if kinds else "(false)"


def cursor_clause(order: MemoryOrder, after: PageCursor) -> str:
    """Rows strictly after ``after`` in (created_at, id) ``order``."""
    op = ">" if order is MemoryOrder.CREATED_ASC else "<"
    ts = sql_ts(after.created_at)
    return f"(created_at {op} {ts} OR (created_at = {ts} AND id {op} {sql_str(after.id)}))"


def where(partition: Partition, *clauses: str) -> str:
    """The partition predicate AND-ed with ``clauses``."""
    return " AND ".join([partition_clause(partition), *clauses])
