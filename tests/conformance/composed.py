"""The conformance suite on the composed repository (durability/repository.py).

Each ``<backend>+repository`` variant wraps a backend the way the daemon does, and
both the store and the record suites run on it:

- ``lancedb+repository``: the daemon's default chain, write-ahead log (in the
  test's scratch directory, applying behind as on LanceDB) -> metrics -> hot cache
  -> LanceDB;
- ``memory+repository``: log -> metrics -> an in-process store (the chain every
  single-writer store without a hot cache gets: Qdrant local mode and Edge, and a
  Qdrant server that one replica owns);
- ``qdrant-server-shared+repository``: a replica's chain over a shared server,
  WriteThrough (no log) -> metrics -> Qdrant.

A representative subset, not every backend: composing all six doubled the
suite's run time (1,174 -> 2,242 tests, ~30 min more on a loaded 2-core box), and
the chains above are the only three the composition builds. The backends
themselves all run bare in the same suite.
"""

from __future__ import annotations

from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

from memoryd.durability.repository import (
    HotCacheOptions,
    LogOptions,
    Repository,
    compose_repository,
)
from memoryd.observability.metrics import Metrics
from memoryd.resilience.degradation import ComponentStates
from memoryd.storage.base import Store
from memoryd.storage.records import RecordStore

#: What the daemon applies behind on a group-commit store (wiring.APPLY_BEHIND_EMBEDDED).
APPLY_BEHIND = 256


def log_options(root: Path, store: Store) -> LogOptions:
    return LogOptions(
        wal_dir=root / "wal",
        store_dir=root,
        segment_bytes=2**20,
        checkpoint_interval_s=0.05,
        apply_behind=APPLY_BEHIND if store.capabilities.group_commit else 0,
        apply_delay_s=0.0,
    )


@dataclass
class Composed:
    """One opened composition; ``close`` closes it all in reverse (log, then stores)."""

    repository: Repository
    stack: AsyncExitStack = field(repr=False)

    async def close(self) -> None:
        await self.stack.aclose()


async def compose(root: Path, store: Store, records: RecordStore, dimension: int) -> Composed:
    """``store`` and ``records`` composed as app.py composes them, opened."""
    stack = AsyncExitStack()
    try:
        repository = await compose_repository(
            store,
            records,
            stack=stack,
            states=ComponentStates(),
            wal=None if store.capabilities.shared else log_options(root, store),
            retry_max_s=0.2,
            hot_cache=HotCacheOptions(dimension, 64 * 2**20)
            if store.capabilities.wants_hot_cache
            else None,
            metrics=Metrics(process_metrics=False),
        )
    except BaseException:
        await stack.aclose()
        raise
    return Composed(repository, stack)


_UNCHECKED = (
    "the log's faces acknowledge a write once logged and check it only when it is "
    "applied (the services validate before; a bad write is set aside): invalid input "
    "is not refused at the call"
)
_AS_WRITTEN = (
    "a write still pending in the log is read back as it was written (the same "
    "objects: not copies, timestamps and tuples not normalised as the store does)"
)
_DUPLICATES = "the log's faces do not collapse duplicate keys of one call as the stores do"
_OVERLAY_RANKING = (
    "memories applied behind the log are scored by the overlay's own cosine, not the "
    "store's: ranks and similarities differ in the last digits"
)
_CLOSE = "the log's faces open and close nothing (the composition's stack does)"

#: Parts of the contract the composed chains do not hold yet, found by running this
#: suite on them: test -> (variants, or None for all three; why). Skipped on those
#: variants with the reason (a non-strict xfail could never fail the run; a strict
#: one would fail on the parametrisations that pass, some of them by timing); each
#: is a follow-up of issue 25, and the bare backends run every one of these tests.
KNOWN_GAPS: dict[str, tuple[frozenset[str] | None, str]] = {
    "test_upsert_rejects_invalid_records": (None, _UNCHECKED),
    "test_upsert_rejects_records_of_another_partition": (None, _UNCHECKED),
    "test_a_bad_batch_stores_nothing": (None, _UNCHECKED),
    "test_documents_round_trip_as_json": (None, _UNCHECKED),
    "test_invalid_query_vector_is_rejected": (
        None,
        "the log's faces answer a search that raised from the log alone (degraded), so "
        "a bad query vector gets no hits instead of an error",
    ),
    "test_closed_store_raises_store_error": (None, _CLOSE),
    "test_documents_are_copies": (None, _AS_WRITTEN),
    "test_returned_records_are_copies": (None, _AS_WRITTEN),
    "test_timestamps_are_stored_in_utc": (None, _AS_WRITTEN),
    "test_tuples_come_back_as_lists": (None, _AS_WRITTEN),
    "test_every_field_round_trips": (None, _AS_WRITTEN),
    "test_upsert_replaces_every_field": (None, _AS_WRITTEN),
    "test_records_survive_a_reopen": (None, _AS_WRITTEN),
    "test_every_method_is_partition_scoped": (None, _DUPLICATES),
    "test_delete_returns_the_keys_that_existed": (None, _DUPLICATES),
    "test_best_first_positive_scores_and_limit": (None, _OVERLAY_RANKING),
    "test_ranking_and_similarity_match_numpy": (None, _OVERLAY_RANKING),
    "test_search_many_equals_one_search_per_vector": (None, _OVERLAY_RANKING),
    "test_a_write_followed_at_once_by_another_is_still_confirmed": (
        frozenset({"qdrant-server-shared+repository"}),
        "reads the Qdrant record store's engine, which the composition wraps",
    ),
}


def known_gap(test: str, variant: str) -> str | None:
    """Why ``test`` is expected to fail on the composed ``variant`` (None: it holds)."""
    gap = KNOWN_GAPS.get(test)
    if gap is None or (gap[0] is not None and variant not in gap[0]):
        return None
    return gap[1]
