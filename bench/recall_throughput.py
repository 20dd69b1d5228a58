"""`make bench`, section `recall` (the 10k tier): Recall throughput at 32 concurrent
clients beside its floor, in one run.

The Go load generator (bench/loadgen, closed loop, 32 clients) drives, alternately for
ROUNDS rounds so that both see the same load on this shared machine:

- memoryd: the 10k tier's daemon (embedded LanceDB, the hot cache, the default local
  model), k = 10 filtered to the agent, the query vector supplied;
- the floor: an empty grpc.aio server answering every Recall with a prebuilt 10-result
  response (bench/grpc_servers.py's first kind);

then memoryd with text queries, which the model embeds (a new text each call; the
model's own rate, from the `model` section, bounds those). Reported per round and as
medians: RPS, p50 / p99 ms, memoryd / floor RPS, and the load average.
"""

from __future__ import annotations

import os
import random
import statistics
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grpc_servers
from common import query_text

CLIENTS = 32
ROUNDS = 3
#: Targets (issue 31): 2,000 Recalls/s at 32 clients with p99 ≤ 25 ms on a quiet box,
#: where the empty grpc.aio server answered 5,438/s: 0.37 of the floor.
MIN_RPS, MAX_P99_MS, MIN_FLOOR_SHARE = 2_000, 25.0, 0.37


def _median(rows: list[dict[str, Any]], key: str) -> float | None:
    values = [r[key] for r in rows if key in r]
    return round(statistics.median(values), 3) if values else None


def run(
    loadgen: Path,
    address: str,
    agent: str,
    queries_f32: Path,
    tmp: Path,
    seconds: float,
    log: Callable[[str], None],
) -> dict[str, Any]:
    if not loadgen.is_file():
        return {"error": f"{loadgen} not built (make bench builds it)"}
    texts = tmp / "throughput-queries.txt"
    rng = random.Random(31)
    texts.write_text("\n".join(query_text(rng, i) for i in range(5000)) + "\n")
    out: dict[str, Any] = {
        "clients": CLIENTS,
        "load_average_at_start": round(os.getloadavg()[0], 2),
    }
    mine: list[dict[str, Any]] = []
    floor: list[dict[str, Any]] = []
    with grpc_servers.serving("grpc.aio", tmp) as port:
        for _ in range(ROUNDS):
            floor.append(
                grpc_servers.loadgen_row(
                    loadgen, f"127.0.0.1:{port}", queries_f32, CLIENTS, seconds
                )
            )
            mine.append(
                grpc_servers.loadgen_row(loadgen, address, queries_f32, CLIENTS, seconds, agent)
            )
            log(f"recall throughput: memoryd {mine[-1]} floor {floor[-1]}")
    text = grpc_servers.loadgen_row(loadgen, address, texts, CLIENTS, seconds, agent)
    log(f"recall throughput: text queries {text}")
    out.update(
        vector_rounds=mine,
        floor_rounds=floor,
        text=text,
        load_average_at_end=round(os.getloadavg()[0], 2),
    )
    out["vector"] = {k: _median(mine, k) for k in ("rps", "p50", "p99")}
    out["floor"] = {k: _median(floor, k) for k in ("rps", "p50", "p99")}
    rps, floor_rps = out["vector"]["rps"], out["floor"]["rps"]
    out["share_of_floor"] = round(rps / floor_rps, 2) if rps and floor_rps else None
    return out


def target_rows(t: dict[str, Any] | None) -> list[tuple[str, str, str, bool | None]]:
    if not t or "vector" not in t:
        return []
    v, share = t["vector"], t.get("share_of_floor")
    met = None if v["rps"] is None else v["rps"] >= MIN_RPS and v["p99"] <= MAX_P99_MS
    return [
        (
            f"Recall, {CLIENTS} clients, vector supplied (beside the empty grpc.aio server)",
            f"≥ {MIN_RPS:,} RPS and p99 ≤ {MAX_P99_MS:g} ms (quiet box: "
            f"≥ {MIN_FLOOR_SHARE} of the floor)",
            f"{v['rps']} RPS, p99 {v['p99']} ms = {share} of the floor's "
            f"{t['floor']['rps']} RPS (load average {t['load_average_at_start']})",
            met,
        )
    ]


def lines(t: dict[str, Any] | None) -> list[str]:
    if not t or "vector" not in t:
        return []
    out = [
        "",
        f"Recall throughput at {CLIENTS} clients beside its floor (bench/recall_throughput.py: "
        f"{ROUNDS} alternating rounds; load average {t['load_average_at_start']} at the start, "
        f"{t['load_average_at_end']} at the end):",
        "",
        "| round | memoryd RPS | p50 / p99 ms | empty grpc.aio RPS | p50 / p99 ms | share |",
        "|---|---|---|---|---|---|",
    ]
    for i, (m, f) in enumerate(zip(t["vector_rounds"], t["floor_rounds"], strict=True)):
        share = round(m["rps"] / f["rps"], 2) if m.get("rps") and f.get("rps") else None
        out.append(
            f"| {i + 1} | {m.get('rps')} | {m.get('p50')} / {m.get('p99')} | {f.get('rps')} | "
            f"{f.get('p50')} / {f.get('p99')} | {share} |"
        )
    v, f, x = t["vector"], t["floor"], t.get("text") or {}
    out += [
        f"| median | {v['rps']} | {v['p50']} / {v['p99']} | {f['rps']} | {f['p50']} / "
        f"{f['p99']} | {t.get('share_of_floor')} |",
        "",
        f"Text queries (each embedded by the model): {x.get('rps')} RPS, p50 / p99 "
        f"{x.get('p50')} / {x.get('p99')} ms.",
    ]
    return out
