"""The change feed: Watch (docs/watch.md)."""

from __future__ import annotations

from collections.abc import AsyncIterator

from memoryd.domain.changes import WatchItem, WatchQuery
from memoryd.domain.principal import CallScope
from memoryd.observability.tracing import SEARCH
from memoryd.operations.definition import Effect, StreamOperation
from memoryd.operations.services import Services


def _watch(s: Services, scope: CallScope, query: WatchQuery) -> AsyncIterator[WatchItem]:
    return s.changes.watch(scope, query)


WATCH: StreamOperation[WatchQuery, WatchItem] = StreamOperation(
    name="MemoryService.Watch",
    # The agent's own changes are a read; every agent of the tenant crosses agents
    # (like a tenant-wide Export).
    effect=Effect.READ,
    effect_of=lambda q: Effect.ADMIN_OVERRIDE if q.tenant_wide else Effect.READ,
    genai=SEARCH,
    tenant_wide=lambda q: q.tenant_wide,
    run=_watch,
)

OPERATIONS = (WATCH,)
