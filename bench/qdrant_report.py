"""The report's section on memoryd over a Qdrant server (bench/qdrant_server_bench.py)."""

from __future__ import annotations

from typing import Any

import qdrant_writes
from report_values import fmt, p50_p99


def section(q: dict[str, Any] | None) -> list[str]:
    """Section `qdrant` (bench/qdrant_server_bench.py)."""
    if not q:
        return []
    lines = ["", "## memoryd over a Qdrant server (bench/qdrant_server_bench.py)", ""]
    if "tiers" not in q:
        return [*lines, str(q.get("status"))]
    lines += [
        f"Qdrant: {q.get('qdrant')}. memoryd in shared mode (what the Helm chart runs). "
        "p50 / p99 ms through one replica; ratio = memoryd p50 / the peer's "
        "(qdrant-client on the same server and collection: the filtered dense query; for "
        "text, the query embedded by the same local model and a fused dense + BM25 "
        "query; a single point upsert).",
        "",
        "| memories | ingest /s | vector | text | Remember | peer vector | peer text | "
        "peer upsert | ratio vector / text / write | vector via a 3rd replica |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]

    for label, t in q["tiers"].items():
        ratio = t.get("ratio_p50", {})
        lines.append(
            f"| {label} | {fmt(t.get('ingest_per_s'))} | {p50_p99(t, 'one_replica', 'vector')} | "
            f"{p50_p99(t, 'one_replica', 'text')} | {p50_p99(t, 'one_replica', 'remember')} | "
            f"{p50_p99(t, 'peer', 'vector')} | {p50_p99(t, 'peer', 'text')} | {p50_p99(t, 'peer', 'upsert')} | "
            f"{ratio.get('vector')} / {ratio.get('text')} / {ratio.get('remember')} | "
            f"{p50_p99(t, 'third_replica', 'vector')} |"
        )
    lines += [
        "",
        "Concurrency sweep (vector Recall, closed loop; the Go client against memoryd, "
        "qdrant-client's asyncio client against the server):",
        "",
        "| memories | replicas | clients | memoryd RPS | p50 / p99 ms | peer RPS | RPS ratio |",
        "|---|---|---|---|---|---|---|",
    ]
    for label, t in q["tiers"].items():
        for row in t.get("sweep", []):
            m, p = row["memoryd"], row["peer"]
            lines.append(
                f"| {label} | {row['replicas']} | {m.get('clients')} | {fmt(m.get('rps'))} | "
                f"{fmt(m.get('p50'))} / {fmt(m.get('p99'))} | {fmt(p.get('rps'))} | "
                f"{row.get('rps_ratio')} |"
            )
    cost = q.get("cost")
    if cost:
        lines += [
            "",
            "What shared mode costs (one replica, 10k memories, p50 ms):",
            "",
            "| mode | Recall vector | Recall text | Remember | SetMemory |",
            "|---|---|---|---|---|",
        ]
        for mode in ("shared", "single_replica", "single_replica_hot_cache"):
            c = cost.get(mode, {})
            lines.append(
                f"| {mode} | {fmt(c.get('vector'))} | {fmt(c.get('text'))} | "
                f"{fmt(c.get('remember'))} | {fmt(c.get('set_memory'))} |"
            )
        lines.append(
            f"\nshared / single replica: {cost.get('shared_over_single_p50')}; "
            f"shared / single replica with the hot cache: {cost.get('shared_over_hot_cache_p50')}"
        )
    lines += qdrant_writes.lines(q.get("writes"))
    lines += million_lines(q.get("million"))
    if q.get("not_run"):
        lines.append(f"\nNot run: {q['not_run']}.")
    return lines


def million_lines(m: dict[str, Any] | None) -> list[str]:
    """The qdrant section's 1M tier (bench/qdrant_million.py)."""
    if not m:
        return []
    ratio = m.get("ratio_p50", {})
    return [
        "",
        f"1M tier: {m['memories']:,} memories over {m['agents']:,} agents in one collection, "
        f"seeded with memoryd's own QdrantStore at {fmt(m.get('seed_per_s'))} memories/s "
        "(not through the API: bench/qdrant_million.py says why); Qdrant's index when "
        f"measured: {m.get('index')}. One replica, a random agent per query, p50 / p99 ms:",
        "",
        "| Recall vector | Recall text | Remember | peer vector | peer text | ratio vector / text |",
        "|---|---|---|---|---|---|",
        f"| {p50_p99(m, 'memoryd', 'vector')} | {p50_p99(m, 'memoryd', 'text')} | "
        f"{p50_p99(m, 'memoryd', 'remember')} | {p50_p99(m, 'peer', 'vector')} | {p50_p99(m, 'peer', 'text')} | "
        f"{ratio.get('vector')} / {ratio.get('text')} |",
    ]
