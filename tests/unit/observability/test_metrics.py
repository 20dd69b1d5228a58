"""The Metrics object: its own registry, the recording API, and the custom collectors."""

from __future__ import annotations

import prometheus_client
import pytest
from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from memoryd.domain.models import Partition
from memoryd.observability.metrics import OTHER, Metrics, PartitionGauge, split_method


def samples(metrics: Metrics) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    """Every sample of a scrape, parsed back from the exposition text."""
    text = generate_latest(metrics.registry).decode()
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
    }


def value(metrics: Metrics, name: str, **labels: str) -> float | None:
    return samples(metrics).get((name, frozenset(labels.items())))


def names(metrics: Metrics) -> set[str]:
    return {name for name, _ in samples(metrics)}


def test_each_metrics_object_has_its_own_registry_and_the_global_one_is_untouched() -> None:
    before = set(prometheus_client.REGISTRY._names_to_collectors)
    a, b = Metrics(), Metrics(process_metrics=False)
    a.observe_request("/memoryd.v1.MemoryService/Recall", "OK", 0.01)
    assert (
        value(
            a,
            "memoryd_grpc_requests_total",
            service="memoryd.v1.MemoryService",
            method="Recall",
            code="OK",
        )
        == 1
    )
    assert (
        "memoryd_grpc_requests_total",
        frozenset({("service", "memoryd.v1.MemoryService"), ("method", "Recall"), ("code", "OK")}),
    ) not in samples(b)
    assert set(prometheus_client.REGISTRY._names_to_collectors) == before
    shared = CollectorRegistry()
    assert Metrics(shared, process_metrics=False).registry is shared


def test_process_metrics_are_optional() -> None:
    assert "process_resident_memory_bytes" in names(Metrics())
    assert "process_resident_memory_bytes" not in names(Metrics(process_metrics=False))


def test_split_method() -> None:
    assert split_method("/memoryd.v1.MemoryService/Remember") == (
        "memoryd.v1.MemoryService",
        "Remember",
    )


def test_requests_count_and_latency_by_service_method_and_code() -> None:
    m = Metrics(process_metrics=False)
    for code, seconds in (("OK", 0.002), ("OK", 0.2), ("INVALID_ARGUMENT", 0.001)):
        m.observe_request("/memoryd.v1.MemoryService/Remember", code, seconds)
    labels = {"service": "memoryd.v1.MemoryService", "method": "Remember"}
    assert value(m, "memoryd_grpc_requests_total", code="OK", **labels) == 2
    assert value(m, "memoryd_grpc_requests_total", code="INVALID_ARGUMENT", **labels) == 1
    hist = "memoryd_grpc_request_duration_seconds"
    assert value(m, f"{hist}_count", code="OK", **labels) == 2
    assert value(m, f"{hist}_bucket", code="OK", le="0.0025", **labels) == 1
    assert value(m, f"{hist}_sum", code="OK", **labels) == pytest.approx(0.202)


def test_degraded_and_fallbacks_by_component() -> None:
    m = Metrics(process_metrics=False)
    # The known components exist from the start, healthy.
    for component in ("embedder", "store", "llm"):
        assert value(m, "memoryd_degraded", component=component) == 0
        assert value(m, "memoryd_fallbacks_total", component=component) == 0
    m.degraded("embedder", True)
    m.fallback("embedder")
    m.fallback("embedder")
    m.fallback("wal")
    assert value(m, "memoryd_degraded", component="embedder") == 1
    assert value(m, "memoryd_fallbacks_total", component="embedder") == 2
    assert value(m, "memoryd_fallbacks_total", component="wal") == 1
    m.degraded("embedder", False)
    assert value(m, "memoryd_degraded", component="embedder") == 0


def test_wal_series_appear_only_once_the_log_reports() -> None:
    m = Metrics(process_metrics=False)
    assert not {n for n in names(m) if n.startswith("memoryd_wal_")}
    m.wal_backlog(7)
    m.wal_fsync(0.003)
    assert value(m, "memoryd_wal_backlog_entries") == 7
    assert value(m, "memoryd_wal_fsync_duration_seconds_count") == 1
    assert value(m, "memoryd_wal_fsync_duration_seconds_bucket", le="0.005") == 1


def test_maintenance_runs_and_durations() -> None:
    m = Metrics(process_metrics=False)
    m.maintenance_run(12.5, "ok")
    m.maintenance_run(0.2, "failed")
    m.maintenance_run(3.0, "ok")
    assert value(m, "memoryd_maintenance_runs_total", outcome="ok") == 2
    assert value(m, "memoryd_maintenance_duration_seconds_sum", outcome="ok") == 15.5
    assert value(m, "memoryd_maintenance_duration_seconds_count", outcome="failed") == 1
    last = value(m, "memoryd_maintenance_last_run_timestamp_seconds", outcome="ok")
    assert last is not None and last > 1.6e9


class FakeCache:
    def __init__(self) -> None:
        self.hits = self.misses = 0
        self.items: dict[str, int] = {}

    def __len__(self) -> int:
        return len(self.items)


class FakeHotCache:
    def __init__(self) -> None:
        self.hits = self.misses = self.loads = self.evictions = self.bypasses = 0


def test_cache_counters_are_read_at_scrape_time() -> None:
    m = Metrics(process_metrics=False)
    assert "memoryd_cache_hits_total" not in names(m)
    embedding, hot = FakeCache(), FakeHotCache()
    m.watch_cache("embedding", embedding)
    m.watch_hot_cache(hot)
    embedding.hits, embedding.misses, embedding.items["a"] = 5, 2, 1
    hot.hits, hot.misses, hot.loads, hot.evictions, hot.bypasses = 9, 3, 3, 1, 4
    assert value(m, "memoryd_cache_hits_total", cache="embedding") == 5
    assert value(m, "memoryd_cache_misses_total", cache="embedding") == 2
    assert value(m, "memoryd_cache_entries", cache="embedding") == 1
    assert value(m, "memoryd_cache_hits_total", cache="hot_partition") == 9
    assert value(m, "memoryd_cache_misses_total", cache="hot_partition") == 3
    assert value(m, "memoryd_cache_entries", cache="hot_partition") is None  # no len()
    assert value(m, "memoryd_hot_cache_loads_total") == 3
    assert value(m, "memoryd_hot_cache_evictions_total") == 1
    assert value(m, "memoryd_hot_cache_bypasses_total") == 4
    embedding.hits += 1
    assert value(m, "memoryd_cache_hits_total", cache="embedding") == 6


def test_build_info() -> None:
    m = Metrics(process_metrics=False)
    m.set_info(version="1.2.3", store="lancedb")
    assert value(m, "memoryd_build_info", version="1.2.3", store="lancedb") == 1


def test_partition_gauge_is_empty_until_fed() -> None:
    m = Metrics(process_metrics=False)
    assert "memoryd_memories" not in names(m) and "memoryd_partitions" not in names(m)
    m.partitions.update({Partition("t", "a"): 3}, max_series=5)
    assert value(m, "memoryd_memories", tenant="t", agent="a") == 3
    assert value(m, "memoryd_partitions") == 1


partition_counts = st.dictionaries(
    st.builds(Partition, st.sampled_from(["t1", "t2", "t3"]), st.text("abcdef", min_size=1)),
    st.integers(0, 10_000),
    max_size=40,
)


@given(counts=partition_counts, max_series=st.integers(1, 10))
def test_partition_gauge_keeps_the_largest_and_sums_the_rest(
    counts: dict[Partition, int], max_series: int
) -> None:
    gauge = PartitionGauge()
    gauge.update(counts, max_series)
    (family, total) = list(gauge.collect())
    rows = {(s.labels["tenant"], s.labels["agent"]): s.value for s in family.samples}
    # Bounded: at most max_series partitions plus the one aggregate.
    assert len(rows) <= max_series + 1
    # Nothing lost: the series add up to every memory.
    assert sum(rows.values()) == sum(counts.values())
    assert total.samples[0].value == len(counts)
    named = {k: v for k, v in rows.items() if k != (OTHER, OTHER)}
    if len(counts) <= max_series:
        assert (OTHER, OTHER) not in rows
        assert named == {(p.tenant_id, p.agent_id): n for p, n in counts.items()}
    else:
        assert len(named) == max_series
        # Every partition kept is at least as large as every partition summed away.
        kept = set(named)
        dropped = [n for p, n in counts.items() if (p.tenant_id, p.agent_id) not in kept]
        assert min(named.values()) >= max(dropped)
