"""Retrieval quality of the daemon's own Recall on REALTALK and MemDaily: today's
defaults (the baseline) against the new ones, side by side in one run.

The protocol of bench/data/README.md: one namespace per chat (REALTALK) or trajectory
(MemDaily), every turn one memory ("<speaker>: <text>", created_at and occurred_at
from its date, its turn id in metadata), all in one agent of one real daemon (LanceDB
on disk) reached over real gRPC; each question recalls the top 50 of its namespace
with the server's default scoring, asked at its time (RecallRequest.now: MemDaily's
question time, REALTALK's last turn). Reported per split and category (and for the
questions that name a time, memoryd.text.when): recall_all@k (every gold turn in the
top k), recall_any@k (a gold turn in the top k) and MRR, with recall latency; then the
baseline's and the new daemon's latency with both running, questions interleaved.

Variants (each a daemon: its code and its settings):
- baseline: the code of BASELINE_COMMIT (today's defaults before issue 24), extracted
  with `git archive` and run from this venv.
- new: this tree's defaults.
- A/B variants: this tree with one recall setting changed (a lever off or on).
Embeddings are computed once per model (quality_data.py, cached in bench/.cache) and
sent with the requests, so the variants differ only in what the daemon does with
them; then the baseline and the new defaults are run once more end to end, the query
text alone, the daemon's model embedding it (latency is taken from these runs).

REALTALK's chats in quality_data.HELD_OUT were kept aside from the start: settings
were chosen on the other eight ("dev"), and the held-out split is reported apart.

Usage: python bench/quality.py [--quick] [--skip-memdaily] [--skip-realtalk] [--skip-ab]
       [--json-out PATH] [--memdaily-embedders NAME,NAME] [--memdaily-files N]
`make bench` runs all of REALTALK and 4 MemDaily files (`--quick`: 3 chats); the whole
MemDaily protocol with both embedders: --skip-realtalk --memdaily-embedders
local,multilingual (the first run embeds 26,531 messages per model: minutes).
Prints a markdown report; writes JSON to bench/results/quality-<date>.json.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator, Sequence
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from google.protobuf import struct_pb2, timestamp_pb2
from quality_checks import (
    extraction,
    extraction_markdown,
    relevance_separation,
    targets,
    targets_markdown,
)
from quality_data import (
    HELD_OUT,
    Corpus,
    Question,
    Vectors,
    embeddings,
    load_memdaily,
    load_realtalk,
    split,
)

from memoryd.config import EmbeddingSettings
from memoryd.embedding.factory import build_embedder
from memoryd.text.when import asked_part, time_spans
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

REPO = Path(__file__).resolve().parent.parent
RESULTS = REPO / "bench" / "results"
#: main before issue 24: the baseline's code.
BASELINE_COMMIT = "2f50275"
KS = (1, 5, 10, 25, 50)
#: The category of the questions that name a time (memoryd.text.when), any category.
NAMES_A_TIME = "names a time"
TOP = max(KS)
AGENT = "quality"
#: Questions timed in the interleaved latency comparison (the first of the corpus).
LATENCY_QUESTIONS = 700
BATCH = 500


@dataclass(frozen=True)
class Variant:
    """A daemon to measure: ``baseline`` code or this tree's, with ``env`` settings and
    its ``embedder`` (None: the run's, --realtalk-embedder / --memdaily-embedders)."""

    name: str
    baseline: bool = False
    env: dict[str, str] = field(default_factory=dict)
    embedder: str | None = None


#: The code before issue 24 with its model, MiniLM ("local" then).
BASELINE = Variant("baseline", baseline=True, embedder="local")
NEW = Variant("new")
#: One lever changed against the new defaults each (named by what they change).
AB_VARIANTS = (
    # MiniLM from PyPI (no fetch) with its own profile (model_catalog.MINILM_PROFILE).
    Variant("new, minilm", embedder="minilm"),
    Variant("new, time-aware off", env={"MEMORYD_RECALL__TEMPORAL_WEIGHT": "0"}),
    Variant("new, cosine spread floor 0.5", env={"MEMORYD_RECALL__CONVEX_MIN_SPREAD": "0.5"}),
    Variant("new, text feedback 5 terms", env={"MEMORYD_RECALL__FEEDBACK_TERMS": "5"}),
    Variant("new, rrf fusion (as before)", env={"MEMORYD_RECALL__FUSION": "rrf"}),
    Variant("new, context expansion on", env={"MEMORYD_RECALL__CONTEXT_NEIGHBOURS": "1"}),
    Variant("new, neighbour support off", env={"MEMORYD_RECALL__NEIGHBOUR_WEIGHT": "0"}),
    Variant(
        "new, equal weights",
        env={
            "MEMORYD_RECALL__HYBRID_VECTOR_WEIGHT": "1",
            "MEMORYD_RECALL__HYBRID_TEXT_WEIGHT": "1",
        },
    ),
    # The protocol turns write-time curation off (every turn one live memory); this is
    # the daemon exactly as configured out of the box.
    Variant(
        "new, write-time curation on (dedup, contradictions: the defaults)",
        env={"MEMORYD_DEDUP__ENABLED": "true", "MEMORYD_CONTRADICTIONS__MODE": "auto"},
    ),
)


# ---------------------------------------------------------------- the daemon


@contextmanager
def baseline_code() -> Iterator[Path]:
    """BASELINE_COMMIT's server/ in a temporary directory (for PYTHONPATH)."""
    with tempfile.TemporaryDirectory(prefix="memoryd-baseline-") as tmp:
        archive = subprocess.run(
            ["git", "-C", str(REPO), "archive", BASELINE_COMMIT, "server"],
            check=True,
            capture_output=True,
        )
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        yield Path(tmp) / "server"


@contextmanager
def daemon(
    data_dir: Path, embedder: str, env: dict[str, str], code: Path | None = None
) -> Iterator[mgrpc.MemoryServiceStub]:
    data_dir.parent.mkdir(parents=True, exist_ok=True)
    ready = data_dir.parent / f"{data_dir.name}.ready"
    ready.unlink(missing_ok=True)
    log = data_dir.parent / f"{data_dir.name}.log"
    settings = {
        "MEMORYD_LOGGING__LEVEL": "warning",
        "MEMORYD_DEDUP__ENABLED": "false",
        # Every turn stays one live memory: contradiction handling would archive an
        # earlier turn that a later one contradicts ("I love pasta" / "I don't"),
        # and recall does not return archived memories (the baseline has none).
        "MEMORYD_CONTRADICTIONS__MODE": "off",
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
    if code is not None:
        settings["PYTHONPATH"] = str(code)
    args = ["--listen", "127.0.0.1:0", "--data-dir", str(data_dir), "--ready-file", str(ready)]
    proc = subprocess.Popen(
        [sys.executable, "-m", "memoryd", "serve", *args, "--embedder", embedder],
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


def ingest(stub: mgrpc.MemoryServiceStub, corpus: Corpus, vectors: Vectors | None) -> float:
    """Stores every turn (with its vector when given); returns memories per second."""
    started = time.perf_counter()
    for i in range(0, len(corpus.turns), BATCH):
        items = []
        for j, t in enumerate(corpus.turns[i : i + BATCH], start=i):
            meta = struct_pb2.Struct()
            meta.update({"turn_id": t.turn_id})
            item = mpb.RememberRequest(
                content=t.text,
                namespace=t.namespace,
                created_at=_timestamp(t.created_at),
                # The turn's time is also when what it tells happened, as far as the
                # data says (the baseline's server ignores the field).
                occurred_at=_timestamp(t.created_at),
                metadata=meta,
                # Its place in its conversation, for context expansion (the baseline's
                # server ignores the fields).
                session_id=t.session,
                sequence=t.sequence,
            )
            if vectors is not None:
                item.embedding.extend(vectors[j].tolist())
            items.append(item)
        response = stub.RememberBatch(
            mpb.RememberBatchRequest(agent_id=AGENT, items=items), timeout=600
        )
        _check_not_degraded(response.degraded)
    return len(corpus.turns) / (time.perf_counter() - started)


def _check_not_degraded(degraded: Sequence[object]) -> None:
    if degraded:
        raise SystemExit(f"the daemon answered degraded, measurements are void: {degraded}")


def warm_up(stub: mgrpc.MemoryServiceStub, corpus: Corpus) -> None:
    """Loads every namespace's partition and builds its text index before timing (the
    first text searches of a big partition go to LanceDB while it builds)."""
    for q in corpus.questions[:5]:
        stub.Recall(mpb.RecallRequest(agent_id=AGENT, query=q.text, namespace=q.namespace))
    time.sleep(3)


# ---------------------------------------------------------------- measuring


def evaluate(
    stub: mgrpc.MemoryServiceStub, questions: list[Question], vectors: Vectors | None
) -> tuple[list[list[str]], list[float], list[list[float]]]:
    """Each question's ranked turn ids, its recall latency (seconds) and its hits'
    relevance (RecallResult.relevance; 0 from the baseline, which has none)."""
    ranked: list[list[str]] = []
    latencies: list[float] = []
    relevances: list[list[float]] = []
    for i, q in enumerate(questions):
        request = mpb.RecallRequest(
            agent_id=AGENT,
            query=q.text,
            namespace=q.namespace,
            limit=TOP,
            now=_timestamp(q.asked_at),
        )
        if vectors is not None:
            request.query_embedding.extend(vectors[i].tolist())
        started = time.perf_counter()
        response = stub.Recall(request, timeout=60)
        latencies.append(time.perf_counter() - started)
        _check_not_degraded(response.degraded)
        ranked.append([r.memory.metadata["turn_id"] for r in response.results])
        relevances.append([r.relevance for r in response.results])
    return ranked, latencies, relevances


def scores(questions: list[Question], ranked: list[list[str]]) -> dict[str, dict[str, float]]:
    """Per category, for the questions that name a time (of any category: what
    time-aware recall can change), and overall."""
    by_category: dict[str, list[tuple[list[str], frozenset[str]]]] = defaultdict(list)
    timed = []
    for q, r in zip(questions, ranked, strict=True):
        by_category[q.category].append((r, q.gold))
        if time_spans(asked_part(q.text), q.asked_at):
            timed.append((r, q.gold))
    out = {name: _scores(items) for name, items in sorted(by_category.items())}
    if timed:
        out[NAMES_A_TIME] = _scores(timed)
    out["overall"] = _scores([item for items in by_category.values() for item in items])
    return out


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


def latency(seconds: list[float]) -> dict[str, float]:
    ms = np.array(seconds) * 1000
    return {f"p{p}": round(float(np.percentile(ms, p)), 2) for p in (50, 95, 99)}


def measure(
    corpus: Corpus,
    embedder: str,
    tmp: Path,
    variants: Sequence[Variant],
    *,
    held_out: frozenset[str] = frozenset(),
    end_to_end: bool = True,
    relevance: bool = False,
) -> dict[str, Any]:
    """Every variant on ``corpus`` with cached vectors (its own embedder's), then the
    baseline and the new defaults end to end (query text only). ``relevance``: how
    well the new defaults' relevance separates a question's hits in its own namespace
    from its top hit in another (relevance_separation)."""
    index = {id(q): i for i, q in enumerate(corpus.questions)}
    splits = split(corpus, held_out)
    report: dict[str, Any] = {
        "embedder": embedder,
        "memories": len(corpus.turns),
        "splits": {name: len(qs) for name, qs in splits.items()},
        "runs": {},
    }
    groups: dict[tuple[bool, str], list[Variant]] = defaultdict(list)
    for v in variants:
        groups[(v.baseline, v.embedder or embedder)].append(v)
    served: dict[str, tuple[Path, Path | None, str, Vectors]] = {}
    with baseline_code() as old_code:
        for (is_baseline, model), members in groups.items():
            doc_vectors, query_vectors = embeddings(corpus, model)
            code, code_name = (old_code, "baseline") if is_baseline else (None, "new")
            data_dir = tmp / f"{corpus.name}-{model}-{code_name}" / "data"
            with daemon(data_dir, model, {}, code) as stub:
                rate = ingest(stub, corpus, doc_vectors)
                report[f"ingest_per_s ({code_name}, {model})"] = round(rate, 1)
                warm_up(stub, corpus)
            for variant in members:
                served[variant.name] = (data_dir, code, model, query_vectors)
                runs = [("vectors supplied", True)]
                if end_to_end and variant in (BASELINE, NEW):
                    runs.append(("end to end", False))
                with daemon(data_dir, model, variant.env, code) as stub:
                    warm_up(stub, corpus)
                    for how, supplied in runs:
                        print(f"  {corpus.name} {model} {variant.name} ({how})", flush=True)
                        ranked, seconds, relevances = evaluate(
                            stub, corpus.questions, query_vectors if supplied else None
                        )
                        report["runs"][f"{variant.name} ({how})"] = {
                            name: {
                                "embedder": model,
                                "scores": scores(qs, [ranked[index[id(q)]] for q in qs]),
                                "latency_ms": latency([seconds[index[id(q)]] for q in qs]),
                            }
                            for name, qs in splits.items()
                        }
                    if relevance and variant is NEW:
                        print(f"  {corpus.name} {model} relevance, own and other chats", flush=True)
                        report["relevance"] = relevance_separation(
                            stub, corpus, query_vectors, ranked, relevances, held_out
                        )
        if end_to_end and BASELINE.name in served and NEW.name in served:
            print(f"  {corpus.name} latency, baseline and new interleaved", flush=True)
            pair = {"baseline": served[BASELINE.name], "new": served[NEW.name]}
            report["latency_interleaved"] = interleaved_latency(pair, corpus)
            report["model_query_ms"] = model_query_ms(corpus, served[NEW.name][2])
    return report


def model_query_ms(corpus: Corpus, embedder: str) -> dict[str, Any]:
    """The model alone embedding each question as a query, in process, with the
    daemon's threads: what Recall's end-to-end latency is compared with."""
    questions = [q.text for q in corpus.questions[:LATENCY_QUESTIONS]]

    async def run() -> list[float]:
        model = build_embedder(embedder, EmbeddingSettings(cache_size=0))  # type: ignore[arg-type]
        try:
            for text in questions[:5]:
                await model.embed([text], kind="query")
            seconds = []
            for text in questions:
                started = time.perf_counter()
                await model.embed([text], kind="query")
                seconds.append(time.perf_counter() - started)
            return seconds
        finally:
            await model.close()

    return {"embedder": embedder, **latency(asyncio.run(run()))}


def interleaved_latency(
    pair: dict[str, tuple[Path, Path | None, str, Vectors]], corpus: Corpus
) -> dict[str, Any]:
    """Recall latency of the baseline's and the new daemon, both running, each question
    sent to one and then the other (the order alternating), with the vector supplied
    and end to end: on a shared machine whose load drifts, the two see the same load,
    which separate runs minutes apart do not."""
    questions = corpus.questions[:LATENCY_QUESTIONS]
    seconds: dict[str, list[float]] = defaultdict(list)
    with ExitStack() as stack:
        stubs = {
            name: stack.enter_context(daemon(data_dir, model, {}, code))
            for name, (data_dir, code, model, _) in pair.items()
        }
        for stub in stubs.values():
            warm_up(stub, corpus)
        names = list(stubs)
        for i, q in enumerate(questions):
            for how in ("vectors supplied", "end to end"):
                for name in names if i % 2 == 0 else names[::-1]:
                    request = mpb.RecallRequest(
                        agent_id=AGENT, query=q.text, namespace=q.namespace, limit=TOP
                    )
                    if how == "vectors supplied":
                        request.query_embedding.extend(pair[name][3][i].tolist())
                    started = time.perf_counter()
                    stubs[name].Recall(request, timeout=60)
                    seconds[f"{name} ({how})"].append(time.perf_counter() - started)
    out: dict[str, Any] = {"questions": len(questions)}
    out.update({run: latency(values) for run, values in seconds.items()})
    for how in ("vectors supplied", "end to end"):
        new, old = out[f"new ({how})"]["p50"], out[f"baseline ({how})"]["p50"]
        out[f"p50 new / baseline ({how})"] = round(new / old, 2) if old else None
    return out


# ---------------------------------------------------------------- reporting

COLUMNS = ("recall_all@10", "recall_any@10", "recall_all@5", "recall_all@25", "mrr")


def _latency_lines(report: dict[str, Any]) -> list[str]:
    timing = report.get("latency_interleaved")
    if not timing:
        return []
    lines = [
        "",
        f"Recall latency, baseline and new interleaved ({timing['questions']} questions):",
        "",
        "| daemon | how | p50 ms | p95 ms | p99 ms |",
        "|---|---|---|---|---|",
    ]
    for run, values in timing.items():
        if isinstance(values, dict):
            name, _, how = run.partition(" (")
            lines.append(
                f"| {name} | {how.rstrip(')')} | {values['p50']} | {values['p95']} | "
                f"{values['p99']} |"
            )
    lines += [
        f"| p50 new / baseline | {how} | {timing[f'p50 new / baseline ({how})']} | | |"
        for how in ("vectors supplied", "end to end")
    ]
    return lines


def markdown(name: str, report: dict[str, Any]) -> str:
    lines = [
        f"### {name} ({report['embedder']} embedder, {report['memories']} memories; "
        f"questions {report['splits']})",
        "",
        "| run | split | category | n | " + " | ".join(COLUMNS) + " | p50 ms | p95 ms |",
        "|---|---|---|---|" + "---|" * len(COLUMNS) + "---|---|",
    ]
    for run, by_split in report["runs"].items():
        for split_name, result in by_split.items():
            for category, s in result["scores"].items():
                cells = " | ".join(f"{s[c]:.3f}" for c in COLUMNS)
                lat = result["latency_ms"]
                timing = f"{lat['p50']} | {lat['p95']}" if category == "overall" else " | "
                lines.append(
                    f"| {run} | {split_name} | {category} | {int(s['questions'])} | {cells} "
                    f"| {timing} |"
                )
    return "\n".join(lines + _latency_lines(report))


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="3 chats, 4 MemDaily files")
    parser.add_argument("--skip-memdaily", action="store_true")
    parser.add_argument("--skip-realtalk", action="store_true")
    parser.add_argument("--skip-ab", action="store_true", help="baseline and new only")
    parser.add_argument(
        "--variants",
        type=lambda v: [x for x in v.split(",") if x],
        default=None,
        help="only the variants whose names contain one of these (comma-separated)",
    )
    parser.add_argument(
        "--no-end-to-end", action="store_true", help="vectors supplied only (no latency runs)"
    )
    parser.add_argument("--json-out", type=Path)
    parser.add_argument(
        "--memdaily-files", type=int, default=None, help="a spread of this many MemDaily files"
    )
    parser.add_argument(
        "--realtalk-embedder", default="e5", help="memoryd embedder of the new defaults"
    )
    parser.add_argument(
        "--memdaily-embedders",
        type=lambda v: [x for x in v.split(",") if x],
        default=["e5"],
        help="comma-separated embedders for MemDaily, e.g. e5,multilingual",
    )
    args = parser.parse_args()
    report: dict[str, Any] = {
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, "
        f"Python {platform.python_version()}, load average {os.getloadavg()[0]:.1f}",
        "quick": args.quick,
        "baseline_commit": BASELINE_COMMIT,
    }
    sections = []
    stem = "quality-quick" if args.quick else "quality"
    out = args.json_out or RESULTS / f"{stem}-{datetime.now(UTC).date().isoformat()}.json"
    out.parent.mkdir(parents=True, exist_ok=True)

    def save() -> None:  # after each corpus, so a late failure keeps what was measured
        out.write_text(json.dumps(report, indent=2, ensure_ascii=False))

    variants = [BASELINE, NEW, *(() if args.skip_ab else AB_VARIANTS)]
    if args.variants:  # each part: a variant's exact name, else part of names
        names = {v.name for v in variants}
        variants = [
            v
            for v in variants
            if any(p == v.name or (p not in names and p in v.name) for p in args.variants)
        ]
    with tempfile.TemporaryDirectory() as tmp:
        if not args.skip_realtalk:
            # --quick: the first two chats (dev) and one held-out chat.
            realtalk = load_realtalk(None)
            if args.quick:
                keep = {"Chat_10_Fahim_Muhhamed", "Chat_1_Emi_Elise", "Chat_3_Kevin_Paola"}
                realtalk = _subset(realtalk, keep)
            result = measure(
                realtalk,
                args.realtalk_embedder,
                Path(tmp),
                variants,
                held_out=HELD_OUT,
                end_to_end=not args.no_end_to_end,
                relevance=True,
            )
            report["realtalk"] = result
            save()
            sections.append(markdown("REALTALK", result))
        if not args.skip_memdaily:
            memdaily = load_memdaily(4 if args.quick else args.memdaily_files)
            for embedder in args.memdaily_embedders:
                # The A/B levers on MemDaily only when asked for by name (--variants).
                chosen = variants if args.variants else [BASELINE, NEW]
                result = measure(
                    memdaily, embedder, Path(tmp), chosen, end_to_end=not args.no_end_to_end
                )
                report[f"memdaily_{embedder}"] = result
                save()
                sections.append(markdown("MemDaily", result))

    report["extraction"] = extraction()
    report["targets"] = targets(report)
    sections.append(extraction_markdown(report["extraction"]))
    sections.append(targets_markdown(report["targets"]))
    print(f"\n## Recall quality ({report['date']}, {report['machine']})\n")
    print("\n\n".join(sections))
    save()
    print(f"\nwrote {out}")


def _subset(corpus: Corpus, namespaces: set[str]) -> Corpus:
    return Corpus(
        corpus.name,
        [t for t in corpus.turns if t.namespace in namespaces],
        [q for q in corpus.questions if q.namespace in namespaces],
    )


if __name__ == "__main__":
    main()
