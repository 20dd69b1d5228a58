"""Prometheus metrics: one :class:`Metrics` object per daemon, over a registry it owns.

Nothing here registers at import time and nothing uses prometheus_client's global
REGISTRY: app.py builds one ``Metrics`` at start-up and passes it to what records
(the operation layer's door, the instrumented embedder and stores, and later the write-ahead
log and maintenance). Metrics are only ever pulled from the HTTP endpoint
(observability/http.py); nothing is pushed anywhere.

Counters kept as plain attributes by their owners (the embedding cache, the hot
partition cache) are read at scrape time by custom collectors instead of being
mirrored, so their code stays free of metrics.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Protocol

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, Info
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector

from memoryd.domain.models import Partition

#: gRPC calls and store operations: sub-millisecond hot-cache hits to slow commits.
LATENCY_BUCKETS = (
    0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0,
)  # fmt: skip
EMBEDDING_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 4096)
FSYNC_BUCKETS = (0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1.0)
MAINTENANCE_BUCKETS = (0.1, 0.5, 1.0, 5.0, 10.0, 30.0, 60.0, 300.0, 900.0, 3600.0)

#: Components whose degraded gauge and fallback counter exist from the start (at 0):
#: the dependencies a response's ``Degradation.component`` names.
KNOWN_COMPONENTS = ("embedder", "store", "llm")
#: The series that sums every partition beyond the largest ``max_series``.
OTHER = "_other"


class CacheCounters(Protocol):
    """What a cache exposes for the cache collector: plain, monotonic counters."""

    hits: int
    misses: int


class HotCacheCounters(CacheCounters, Protocol):
    loads: int
    evictions: int
    bypasses: int


def split_method(path: str) -> tuple[str, str]:
    """``/memoryd.v1.MemoryService/Remember`` -> (``memoryd.v1.MemoryService``, ``Remember``)."""
    service, _, method = path.lstrip("/").partition("/")
    return service, method


class Metrics:
    """Every memoryd metric, registered in ``registry`` (a fresh CollectorRegistry by
    default). The methods are the recording API; the attributes are the metric objects
    for callers that need more (tests, exemplars)."""

    def __init__(
        self, registry: CollectorRegistry | None = None, *, process_metrics: bool = True
    ) -> None:
        self.registry = registry if registry is not None else CollectorRegistry()
        r = self.registry
        self._request_series: dict[tuple[str, str], tuple[Counter, Histogram]] = {}
        self.requests = Counter(
            "memoryd_grpc_requests",
            "gRPC calls handled, by service, method and status code.",
            ["service", "method", "code"],
            registry=r,
        )
        self.request_seconds = Histogram(
            "memoryd_grpc_request_duration_seconds",
            "Time from receiving a gRPC call to its status (streams: until the last message).",
            ["service", "method", "code"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.embedding_seconds = Histogram(
            "memoryd_embedding_duration_seconds",
            "Time of one call to the embedding model (cache hits excluded).",
            ["model", "kind"],
            buckets=EMBEDDING_BUCKETS,
            registry=r,
        )
        self.embedding_batch = Histogram(
            "memoryd_embedding_batch_size",
            "Texts sent to the embedding model in one call.",
            ["model", "kind"],
            buckets=BATCH_BUCKETS,
            registry=r,
        )
        self.embedding_errors = Counter(
            "memoryd_embedding_errors",
            "Calls to the embedding model that failed.",
            ["model"],
            registry=r,
        )
        self.store_seconds = Histogram(
            "memoryd_store_operation_duration_seconds",
            "Time of one storage call, by store (memories, records) and operation.",
            ["store", "operation"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.store_errors = Counter(
            "memoryd_store_errors",
            "Storage calls that raised, by store and operation.",
            ["store", "operation"],
            registry=r,
        )
        self.degraded_state = Gauge(
            "memoryd_degraded",
            "1 while a component is served by its fallback, else 0.",
            ["component"],
            registry=r,
        )
        self.fallbacks = Counter(
            "memoryd_fallbacks",
            "Times a fallback was taken because a component failed.",
            ["component"],
            registry=r,
        )
        for component in KNOWN_COMPONENTS:
            self.degraded_state.labels(component).set(0)
            self.fallbacks.labels(component)
        self.maintenance_runs = Counter(
            "memoryd_maintenance_runs",
            "Maintenance runs (scheduled or requested), by outcome.",
            ["outcome"],
            registry=r,
        )
        self.maintenance_seconds = Histogram(
            "memoryd_maintenance_duration_seconds",
            "Duration of one maintenance run.",
            ["outcome"],
            buckets=MAINTENANCE_BUCKETS,
            registry=r,
        )
        self.maintenance_last = Gauge(
            "memoryd_maintenance_last_run_timestamp_seconds",
            "Unix time the last maintenance run with this outcome finished.",
            ["outcome"],
            registry=r,
        )
        self.info = Info("memoryd_build", "What this daemon runs.", registry=r)
        self.wal = WalMetrics()
        r.register(self.wal)
        self.caches = CacheCollector()
        r.register(self.caches)
        self.partitions = PartitionGauge()
        r.register(self.partitions)
        if process_metrics:
            # The standard process_* / python_* series, into this registry only.
            ProcessCollector(registry=r)
            PlatformCollector(registry=r)
            GCCollector(registry=r)

    # ------------------------------------------------------------------ recording API

    def observe_request(self, path: str, code: str, seconds: float) -> None:
        """One finished gRPC call; ``path`` is the full method (``/pkg.Service/Method``)."""
        series = self._request_series.get((path, code))
        if series is None:
            # labels() hashes and looks up its arguments on every call: the (method,
            # code) pairs are few, so each call's pair of series is looked up once.
            service, method = split_method(path)
            series = (
                self.requests.labels(service, method, code),
                self.request_seconds.labels(service, method, code),
            )
            self._request_series[(path, code)] = series
        series[0].inc()
        series[1].observe(seconds)

    def observe_embedding(self, model: str, kind: str, batch: int, seconds: float) -> None:
        self.embedding_seconds.labels(model, kind).observe(seconds)
        self.embedding_batch.labels(model, kind).observe(batch)

    def embedding_failed(self, model: str) -> None:
        self.embedding_errors.labels(model).inc()

    def observe_store(self, store: str, operation: str, seconds: float, *, ok: bool) -> None:
        self.store_seconds.labels(store, operation).observe(seconds)
        if not ok:
            self.store_errors.labels(store, operation).inc()

    def degraded(self, component: str, degraded: bool) -> None:
        """Set whether ``component`` is currently served by its fallback."""
        self.degraded_state.labels(component).set(1 if degraded else 0)

    def fallback(self, component: str) -> None:
        """Count one fallback taken because ``component`` failed."""
        self.fallbacks.labels(component).inc()

    def wal_backlog(self, entries: int) -> None:
        """Write-ahead log entries appended but not yet applied to the store."""
        self.wal.set_backlog(entries)

    def wal_fsync(self, seconds: float) -> None:
        """One fsync of the write-ahead log (a group commit)."""
        self.wal.observe_fsync(seconds)

    def maintenance_run(self, duration_s: float, outcome: str) -> None:
        """One finished maintenance run; ``outcome`` is e.g. "ok", "failed", "cancelled"."""
        self.maintenance_runs.labels(outcome).inc()
        self.maintenance_seconds.labels(outcome).observe(duration_s)
        self.maintenance_last.labels(outcome).set(time.time())

    def set_info(self, **values: str) -> None:
        """memoryd_build_info labels: version, store backend, embedding model, ..."""
        self.info.info(values)

    def watch_cache(self, name: str, cache: CacheCounters) -> None:
        """Export ``cache.hits`` / ``cache.misses`` (and ``len(cache)``) as cache=name."""
        self.caches.add(name, cache)

    def watch_hot_cache(self, cache: HotCacheCounters) -> None:
        """The hot partition cache: hits and misses plus its loads, evictions, bypasses."""
        self.caches.add("hot_partition", cache, hot=True)


class WalMetrics(Collector):
    """Write-ahead log backlog and fsync latency; exported only once the log reports,
    so a daemon without a write-ahead log shows no such series rather than zeros."""

    def __init__(self) -> None:
        self.backlog = Gauge(
            "memoryd_wal_backlog_entries",
            "Write-ahead log entries appended but not yet applied to the store.",
            registry=None,
        )
        self.fsync_seconds = Histogram(
            "memoryd_wal_fsync_duration_seconds",
            "Time of one write-ahead log fsync (one group commit).",
            buckets=FSYNC_BUCKETS,
            registry=None,
        )
        self.active = False

    def set_backlog(self, entries: int) -> None:
        self.backlog.set(entries)
        self.active = True

    def observe_fsync(self, seconds: float) -> None:
        self.fsync_seconds.observe(seconds)
        self.active = True

    def collect(self) -> Iterable[Metric]:
        if not self.active:
            return []
        return [*self.backlog.collect(), *self.fsync_seconds.collect()]

    def describe(self) -> Iterable[Metric]:
        return []  # known only once active; nothing to check for name clashes before


@dataclass(slots=True)
class _Watched:
    name: str
    cache: CacheCounters
    hot: bool


class CacheCollector(Collector):
    """Reads caches' own counters at scrape time (in the HTTP thread: plain int reads)."""

    def __init__(self) -> None:
        self._watched: list[_Watched] = []

    def add(self, name: str, cache: CacheCounters, *, hot: bool = False) -> None:
        self._watched = [*[w for w in self._watched if w.name != name], _Watched(name, cache, hot)]

    def collect(self) -> Iterator[Metric]:
        watched = self._watched
        if not watched:
            return
        hits = CounterMetricFamily("memoryd_cache_hits", "Cache hits, by cache.", labels=["cache"])
        misses = CounterMetricFamily(
            "memoryd_cache_misses", "Cache misses, by cache.", labels=["cache"]
        )
        entries = GaugeMetricFamily("memoryd_cache_entries", "Entries held.", labels=["cache"])
        for w in watched:
            hits.add_metric([w.name], w.cache.hits)
            misses.add_metric([w.name], w.cache.misses)
            size = getattr(type(w.cache), "__len__", None)
            if size is not None:
                entries.add_metric([w.name], size(w.cache))
        yield from (hits, misses, entries)
        hot = [w.cache for w in watched if w.hot]
        for attr, help_text in (
            ("loads", "Partitions loaded into the hot cache (one store scan each)."),
            ("evictions", "Partitions evicted from the hot cache to stay within its budget."),
            ("bypasses", "Searches of partitions too large for the budget, sent to the store."),
        ):
            if hot:
                family = CounterMetricFamily(f"memoryd_hot_cache_{attr}", help_text)
                family.add_metric([], sum(getattr(c, attr) for c in hot))
                yield family


class PartitionGauge(Collector):
    """memoryd_memories{tenant, agent}: live memories of the largest partitions; the
    rest summed as tenant="_other", agent="_other" so the series count stays bounded.
    Fed by observability/partitions.py (opt-in); empty until then."""

    def __init__(self) -> None:
        self._rows: tuple[tuple[str, str, int], ...] = ()
        self._partitions = 0
        self._fed = False

    def update(self, counts: Mapping[Partition, int], max_series: int) -> None:
        ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0].tenant_id, kv[0].agent_id))
        rows = [(p.tenant_id, p.agent_id, n) for p, n in ranked[:max_series]]
        rest = ranked[max_series:]
        if rest:
            rows.append((OTHER, OTHER, sum(n for _, n in rest)))
        self._rows, self._partitions, self._fed = tuple(rows), len(counts), True

    def collect(self) -> Iterator[Metric]:
        if not self._fed:
            return
        rows, partitions = self._rows, self._partitions  # one consistent snapshot
        family = GaugeMetricFamily(
            "memoryd_memories",
            "Live (unarchived) memories per partition; the smallest partitions are "
            'summed as tenant="_other".',
            labels=["tenant", "agent"],
        )
        for tenant, agent, n in rows:
            family.add_metric([tenant, agent], n)
        yield family
        total = GaugeMetricFamily("memoryd_partitions", "Partitions holding at least one memory.")
        total.add_metric([], partitions)
        yield total
