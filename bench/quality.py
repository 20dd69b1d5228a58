"""Retrieval quality of the daemon's own Recall on REALTALK and MemDaily.

The protocol of bench/data/README.md: one namespace per chat (REALTALK) or trajectory
(MemDaily), every turn one memory ("<speaker>: <text>", created_at from its date, its
turn id in metadata), all in one agent of one real daemon (LanceDB on disk) reached
over real gRPC; each question recalls the top 50 of its namespace. Reported per
category and overall: recall_any@k (a gold turn in the top k), recall_all@k (every
gold turn in the top k) and MRR, for k in 1, 5, 10, 25, 50; plus ingest throughput
and recall latency percentiles (the embedding cache is off, so every query runs the
model).

Methods:
- vector: RecallRequest.hybrid = false.
- bm25: hybrid = true on a daemon started with recall.hybrid_vector_weight = 0, which
  drops the vector ranking from the fusion (the documented way to rank by BM25 alone).
- hybrid: hybrid = true with the default weights (reciprocal rank fusion, k = 60).
Each with scoring preset SIMILARITY (decay off) and DECAYED (decay on, half-life
168 h, measured from now, as the daemon does).

Deduplication is off while ingesting: the protocol stores every turn, and REALTALK
repeats short turns ("Haha yes!") whose merging would drop gold turn ids.

Usage: python bench/quality.py [--quick] [--skip-memdaily] [--skip-realtalk] [--json-out PATH]
       [--realtalk-embedder NAME] [--memdaily-embedders NAME,NAME]
The multilingual embedder on MemDaily alone (needs memoryd[multilingual]):
  python bench/quality.py --skip-realtalk --memdaily-embedders multilingual
Prints a markdown report; writes JSON to bench/results/quality-<date>.json.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import grpc
import numpy as np
from google.protobuf import struct_pb2, timestamp_pb2

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

DATA = Path(__file__).resolve().parent / "data"
RESULTS = Path(__file__).resolve().parent / "results"
KS = (1, 5, 10, 25, 50)
TOP = max(KS)
AGENT = "quality"
BATCH = 500
REALTALK_CATEGORIES = {1: "multi-hop", 2: "temporal", 3: "commonsense"}
PRESETS = {"similarity": mpb.SCORING_PRESET_SIMILARITY, "decayed": mpb.SCORING_PRESET_DECAYED}


@dataclass(frozen=True)
class Turn:
    namespace: str
    turn_id: str
    text: str
    created_at: datetime


@dataclass(frozen=True)
class Question:
    namespace: str
    text: str
    gold: frozenset[str]
    category: str


@dataclass(frozen=True)
class Corpus:
    name: str
    turns: list[Turn]
    questions: list[Question]


# ---------------------------------------------------------------- datasets


def _realtalk_time(value: str) -> datetime:
    return datetime.strptime(value, "%d.%m.%Y, %H:%M:%S").replace(tzinfo=UTC)


def load_realtalk(max_chats: int | None = None) -> Corpus:
    turns: list[Turn] = []
    questions: list[Question] = []
    files = sorted((DATA / "realtalk").glob("Chat_*.json.gz"))[:max_chats]
    for path in files:
        chat = json.loads(gzip.decompress(path.read_bytes()))
        namespace = path.name.removesuffix(".json.gz")
        known: set[str] = set()
        for key, session in chat.items():
            if not re.fullmatch(r"session_\d+", key):
                continue
            session_date = chat.get(f"{key}_date_time")
            for t in session:
                when = t.get("date_time") or session_date
                text = f"{t['speaker']}: {t['clean_text']}"
                turns.append(Turn(namespace, t["dia_id"], text, _realtalk_time(when)))
                known.add(t["dia_id"])
        for qa in chat["qa"]:
            # Some evidence strings are malformed ("D8:6; D9:17", unknown ids).
            gold = {
                part
                for evidence in qa["evidence"]
                for part in re.split(r"[;,\s]+", evidence)
                if part in known
            }
            if gold:
                category = REALTALK_CATEGORIES.get(qa["category"], str(qa["category"]))
                questions.append(Question(namespace, qa["question"], frozenset(gold), category))
    return Corpus("REALTALK", turns, questions)


def _memdaily_time(value: str) -> datetime:
    # "2024年04月01日 周一 08:30": the weekday is redundant.
    day, _, clock = value.split(" ")
    return datetime.strptime(f"{day} {clock}", "%Y年%m月%d日 %H:%M").replace(tzinfo=UTC)


def load_memdaily(max_files: int | None = None) -> Corpus:
    turns: list[Turn] = []
    questions: list[Question] = []
    files = sorted((DATA / "memdaily").glob("*.json.gz"))
    if max_files is not None:
        files = files[:: max(1, len(files) // max_files)][:max_files]
    for path in files:
        stem = path.name.removesuffix(".json.gz")
        # "01_simple_events" -> "simple"; "05_post_processing_roles" -> "post_processing"
        category = stem.split("_", 1)[1].rsplit("_", 1)[0]
        for trajectory in json.loads(gzip.decompress(path.read_bytes())):
            namespace = f"{stem}/{trajectory['tid']}"
            for m in trajectory["message_list"]:
                created = _memdaily_time(m["time"])
                turns.append(Turn(namespace, str(m["mid"]), m["message"], created))
            for q in trajectory["question_list"]:
                gold = frozenset(str(mid) for mid in q["target_step_id"])
                if gold:
                    questions.append(Question(namespace, q["question"], gold, category))
    return Corpus("MemDaily", turns, questions)


# ---------------------------------------------------------------- the daemon


@contextmanager
def daemon(data_dir: Path, embedder: str, env: dict[str, str]) -> Iterator[mgrpc.MemoryServiceStub]:
    ready = data_dir.parent / f"{data_dir.name}.ready"
    ready.unlink(missing_ok=True)
    log = data_dir.parent / f"{data_dir.name}.log"
    settings = {
        "MEMORYD_LOGGING__LEVEL": "warning",
        "MEMORYD_DEDUP__ENABLED": "false",
        "MEMORYD_EMBEDDING__CACHE_SIZE": "0",
        "MEMORYD_METRICS__LISTEN": "127.0.0.1:0",
        # A slow batch must not fall back to the hashing embedder: that measures the
        # fallback, not the method (responses are checked for degradation as well).
        "MEMORYD_RESILIENCE__EMBEDDER_TIMEOUT_S": "600",
        # Scheduled maintenance would archive all but maintenance.max_entries (10,000)
        # memories of the agent in the middle of the measurement.
        "MEMORYD_MAINTENANCE__ENABLED": "false",
        **env,
    }
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "memoryd",
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--data-dir",
            str(data_dir),
            "--ready-file",
            str(ready),
            "--embedder",
            embedder,
        ],
        stderr=log.open("ab"),
        env={**os.environ, **settings},
    )
    try:
        deadline = time.monotonic() + 600
        while not ready.exists():
            if proc.poll() is not None or time.monotonic() > deadline:
                raise SystemExit(f"the daemon did not start:\n{log.read_text()[-3000:]}")
            time.sleep(0.05)
        with grpc.insecure_channel(ready.read_text()) as channel:
            yield mgrpc.MemoryServiceStub(channel)
    finally:
        proc.terminate()
        proc.wait()


def _timestamp(value: datetime) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(value)
    return ts


def ingest(stub: mgrpc.MemoryServiceStub, corpus: Corpus) -> float:
    """Stores every turn; returns memories per second."""
    started = time.perf_counter()
    for i in range(0, len(corpus.turns), BATCH):
        items = []
        for t in corpus.turns[i : i + BATCH]:
            meta = struct_pb2.Struct()
            meta.update({"turn_id": t.turn_id})
            items.append(
                mpb.RememberRequest(
                    content=t.text,
                    namespace=t.namespace,
                    created_at=_timestamp(t.created_at),
                    metadata=meta,
                )
            )
        response = stub.RememberBatch(
            mpb.RememberBatchRequest(agent_id=AGENT, items=items), timeout=600
        )
        _check_not_degraded(response.degraded)
    return len(corpus.turns) / (time.perf_counter() - started)


def _check_not_degraded(degraded: Sequence[object]) -> None:
    if degraded:
        raise SystemExit(f"the daemon answered degraded, measurements are void: {degraded}")


# ---------------------------------------------------------------- measuring


def evaluate(
    stub: mgrpc.MemoryServiceStub, corpus: Corpus, *, hybrid: bool, preset: int
) -> dict[str, object]:
    per_category: dict[str, list[tuple[list[str], frozenset[str]]]] = defaultdict(list)
    latencies: list[float] = []
    for q in corpus.questions:
        request = mpb.RecallRequest(
            agent_id=AGENT,
            query=q.text,
            namespace=q.namespace,
            limit=TOP,
            hybrid=hybrid,
            scoring=mpb.Scoring(preset=preset),  # type: ignore[arg-type]
        )
        started = time.perf_counter()
        response = stub.Recall(request, timeout=60)
        latencies.append(time.perf_counter() - started)
        _check_not_degraded(response.degraded)
        ranked = [r.memory.metadata["turn_id"] for r in response.results]
        per_category[q.category].append((ranked, q.gold))
    everything = [item for items in per_category.values() for item in items]
    scores = {name: _scores(items) for name, items in sorted(per_category.items())}
    scores["overall"] = _scores(everything)
    ms = np.array(latencies) * 1000
    return {
        "scores": scores,
        "latency_ms": {f"p{p}": round(float(np.percentile(ms, p)), 2) for p in (50, 95, 99)},
    }


def _scores(items: list[tuple[list[str], frozenset[str]]]) -> dict[str, float]:
    out: dict[str, float] = {"questions": len(items)}
    for k in KS:
        top = [(set(ranked[:k]), gold) for ranked, gold in items]
        out[f"recall_any@{k}"] = _mean([bool(t & gold) for t, gold in top])
        out[f"recall_all@{k}"] = _mean([gold <= t for t, gold in top])
    reciprocal = []
    for ranked, gold in items:
        rank = next((i for i, turn in enumerate(ranked, 1) if turn in gold), None)
        reciprocal.append(0.0 if rank is None else 1.0 / rank)
    out["mrr"] = _mean(reciprocal)
    return out


def _mean(values: list[bool] | list[float]) -> float:
    return round(float(np.mean(values)), 4) if values else 0.0


def measure(
    corpus: Corpus,
    embedder: str,
    tmp: Path,
    methods: list[str],
    presets: list[str],
    vector_weights: Sequence[float] = (),
) -> dict[str, object]:
    """Ingests once, then runs each method (bm25, and hybrid with other vector weights,
    on a daemon restarted over the same data)."""
    data_dir = tmp / f"{corpus.name}-{embedder}" / "data"
    data_dir.parent.mkdir(parents=True)
    report: dict[str, object] = {"embedder": embedder, "memories": len(corpus.turns)}
    runs: dict[str, object] = {}
    with daemon(data_dir, embedder, {}) as stub:
        report["ingest_per_s"] = round(ingest(stub, corpus), 1)
        for method in (m for m in methods if m != "bm25"):
            for preset in presets:
                print(f"  {corpus.name} {embedder} {method} {preset}", flush=True)
                runs[f"{method}/{preset}"] = evaluate(
                    stub, corpus, hybrid=method == "hybrid", preset=PRESETS[preset]
                )
    if "bm25" in methods:
        env = {"MEMORYD_RECALL__HYBRID_VECTOR_WEIGHT": "0"}
        with daemon(data_dir, embedder, env) as stub:
            for preset in presets:
                print(f"  {corpus.name} {embedder} bm25 {preset}", flush=True)
                runs[f"bm25/{preset}"] = evaluate(stub, corpus, hybrid=True, preset=PRESETS[preset])
    for weight in vector_weights:
        env = {"MEMORYD_RECALL__HYBRID_VECTOR_WEIGHT": str(weight)}
        with daemon(data_dir, embedder, env) as stub:
            print(f"  {corpus.name} {embedder} hybrid, vector weight {weight}", flush=True)
            runs[f"hybrid(vector_weight={weight})/similarity"] = evaluate(
                stub, corpus, hybrid=True, preset=PRESETS["similarity"]
            )
    report["runs"] = runs
    return report


# ---------------------------------------------------------------- reporting


def markdown(name: str, report: dict[str, object], columns: list[str]) -> str:
    runs: dict[str, dict[str, object]] = report["runs"]  # type: ignore[assignment]
    lines = [
        f"### {name} ({report['embedder']} embedder, {report['memories']} memories, "
        f"ingest {report['ingest_per_s']}/s)",
        "",
        "| method | decay | category | n | " + " | ".join(columns) + " | p50 ms | p99 ms |",
        "|---|---|---|---|" + "---|" * len(columns) + "---|---|",
    ]
    for run, result in runs.items():
        method, preset = run.split("/")
        scores: dict[str, dict[str, float]] = result["scores"]  # type: ignore[assignment]
        latency: dict[str, float] = result["latency_ms"]  # type: ignore[assignment]
        for category, s in scores.items():
            cells = " | ".join(f"{s[c]:.3f}" for c in columns)
            timing = f"{latency['p50']} | {latency['p99']}" if category == "overall" else " | "
            decay = "on" if preset == "decayed" else "off"
            lines.append(
                f"| {method} | {decay} | {category} | {int(s['questions'])} | {cells} | {timing} |"
            )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="2 chats, 4 MemDaily files")
    parser.add_argument("--skip-memdaily", action="store_true")
    parser.add_argument("--skip-realtalk", action="store_true")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument(
        "--vector-weights",
        type=lambda v: [float(x) for x in v.split(",") if x],
        default=[],
        help="also run REALTALK hybrid with these recall.hybrid_vector_weight values, e.g. 0.5,0.3",
    )
    parser.add_argument(
        "--realtalk-embedder",
        default="local",
        help="memoryd embedder for REALTALK (local | multilingual | hashing | openai)",
    )
    parser.add_argument(
        "--memdaily-embedders",
        type=lambda v: [x for x in v.split(",") if x],
        default=["hashing", "local"],
        help="comma-separated embedders for MemDaily, e.g. multilingual (default hashing,local)",
    )
    args = parser.parse_args()

    methods = ["vector", "bm25", "hybrid"]
    report: dict[str, object] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}",
        "quick": args.quick,
    }
    wide = [f"recall_all@{k}" for k in KS] + [f"recall_any@{k}" for k in (1, 5, 10)] + ["mrr"]
    sections = []
    out = args.json_out or RESULTS / f"quality-{datetime.now(UTC).date().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:  # after each corpus, so a late failure keeps what was measured
        out.write_text(json.dumps(report, indent=2, ensure_ascii=False))

    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_realtalk:
            realtalk = load_realtalk(2 if args.quick else None)
            result = measure(
                realtalk,
                args.realtalk_embedder,
                Path(tmp),
                methods,
                ["similarity", "decayed"],
                args.vector_weights,
            )
            report["realtalk"] = result
            save()
            sections.append(markdown("REALTALK", result, wide))
        if not args.skip_memdaily:
            memdaily = load_memdaily(4 if args.quick else None)
            short = [
                "recall_any@1",
                "recall_any@5",
                "recall_all@5",
                "recall_any@10",
                "recall_all@10",
                "mrr",
            ]
            for embedder in args.memdaily_embedders:
                result = measure(memdaily, embedder, Path(tmp), methods, ["similarity"])
                report[f"memdaily_{embedder}"] = result
                save()
                sections.append(markdown("MemDaily", result, short))

    print(f"\n## Recall quality ({report['date']}, {report['machine']})\n")
    print("\n\n".join(sections))
    save()
    print(f"\nwrote {out}")


if __name__ == "__main__":
    main()
