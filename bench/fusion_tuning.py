"""Offline tuning of hybrid recall per embedding model, on cached vectors, in process.

The daemon's own MemoryService over the in-process store, one partition per REALTALK
chat (or MemDaily trajectory file), every turn one memory with its vector from
bench/.cache (quality_data.embeddings: computed once per model). The store's vector
and full-text searches do not depend on the fusion settings, so each is computed once
per question and replayed for every setting: a grid of dozens of settings costs
seconds, not a daemon run each (bench/quality.py then measures the chosen ones end to
end, over gRPC).

What it reports, per model:
- the fusion grid (convex spread floor x vector share of the mix; context expansion
  on/off) on REALTALK's dev chats, the best by recall_all@10 (then MRR), and that
  setting on the held-out chats (never used to choose);
- the absolute relevance's calibration (service/memories/relevance.py): a logistic
  fit on the dev chats of a question's evidence hits in its own chat against its top
  hit in another chat, then the AUROC of the top hit in its own chat against in
  another chat on the held-out chats and all, and the min_relevance that keeps 90 %
  of the found evidence and how many off-chat hits it drops;
- MemDaily MRR with the chosen setting (--memdaily).

Usage: python bench/fusion_tuning.py [--models e5,minilm] [--memdaily] [--json-out P]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np
from quality import scores
from quality_checks import auroc, unrelated_namespace
from quality_data import (
    HELD_OUT,
    Corpus,
    Question,
    Vectors,
    embeddings,
    load_memdaily,
    load_realtalk,
)

from memoryd.config import LimitsSettings, RecallSettings, Settings
from memoryd.domain.models import MemoryFilter, Partition, SecurityLevel, TextHit, Vector, VectorHit
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.domain.requests import MemoryDraft, RecallQuery
from memoryd.model_catalog import KIND_OF_MODEL, Relevance
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.relevance import absolute_relevance, coverage, query_terms
from memoryd.service.memories.service import MemoryService
from memoryd.storage.memory import InMemoryStore

TOP = 50
SPREADS = (0.0, 0.05, 0.1, 0.2, 0.3, 0.5)
VECTOR_SHARES = (0.5, 0.6, 0.7)
MODEL_IDS = {kind: model for model, kind in KIND_OF_MODEL.items()}


class Replayed(InMemoryStore):
    """The in-process store whose searches are computed once per (partition, query,
    filter, limit) and replayed: they do not depend on the fusion settings (nothing
    here expires: the filter's clock is left out of the key)."""

    def __init__(self, dimension: int) -> None:
        super().__init__(dimension)
        self._searches: dict[Any, list[VectorHit]] = {}
        self._texts: dict[Any, list[TextHit]] = {}

    async def search(
        self, partition: Partition, vector: Vector, flt: MemoryFilter, limit: int
    ) -> list[VectorHit]:
        key = (partition, np.asarray(vector).tobytes(), replace(flt, not_expired_at=None), limit)
        if key not in self._searches:
            self._searches[key] = await super().search(partition, vector, flt, limit)
        return self._searches[key]

    async def text_search(
        self, partition: Partition, query: str, flt: MemoryFilter, limit: int
    ) -> list[TextHit]:
        key = (partition, query, replace(flt, not_expired_at=None), limit)
        if key not in self._texts:
            self._texts[key] = await super().text_search(partition, query, flt, limit)
        return self._texts[key]


class Supplied:
    """The model's name and size; every vector comes with the request (the cache)."""

    def __init__(self, model_id: str, dimension: int) -> None:
        self.model_id = model_id
        self.dimension = dimension

    async def embed(self, texts: Sequence[str], *, kind: str = "document") -> Vectors:
        raise RuntimeError("fusion_tuning supplies every vector")

    async def close(self) -> None:
        return None


def scope(namespace: str) -> CallScope:
    principal = Principal("bench", "t", frozenset({"*"}), SecurityLevel.RESTRICTED, frozenset(Role))
    return CallScope(principal, Partition("t", namespace.split("/")[0]))


@dataclass
class World:
    store: Replayed
    writer: WriteBatcher
    access: AccessStatsBuffer
    model_id: str

    def service(self, recall: RecallSettings) -> MemoryService:
        return MemoryService(
            store=self.store,
            embedder=Supplied(self.model_id, self.store.dimension),  # type: ignore[arg-type]
            writer=self.writer,
            access=self.access,
            page_tokens=PageTokenCodec(b"k" * 32),
            limits=LimitsSettings(max_top_k=TOP, max_batch_size=1000),
            recall=recall,
        )


async def build(
    corpus: Corpus, docs: Vectors, model_id: str, store: Replayed | None = None
) -> World:
    """The world of ``corpus`` with ``docs`` for vectors, in ``store`` (a new Replayed
    by default)."""
    store = Replayed(docs.shape[1]) if store is None else store
    await store.open()
    writer = WriteBatcher(store, max_batch=1000)
    writer.start()
    access = AccessStatsBuffer(store, interval_s=1e9, max_pending=10**9)
    world = World(store, writer, access, model_id)
    service = world.service(RecallSettings())
    by_namespace: dict[str, list[MemoryDraft]] = {}
    for turn, vector in zip(corpus.turns, docs, strict=True):
        by_namespace.setdefault(turn.namespace, []).append(
            MemoryDraft(
                content=turn.text,
                namespace=turn.namespace,
                created_at=turn.created_at,
                occurred_at=turn.created_at,
                metadata={"turn_id": turn.turn_id},
                embedding=vector,
                session_id=turn.session,
                sequence=turn.sequence,
            )
        )
    for namespace, drafts in by_namespace.items():
        for i in range(0, len(drafts), 1000):
            await service.remember_batch(scope(namespace), drafts[i : i + 1000], dedup=False)
    return world


async def ask(
    service: MemoryService, q: Question, vector: Vector, namespace: str | None = None
) -> list[tuple[str, float, str]]:
    """(turn id, cosine, content) of the top hits, best first."""
    where = namespace or q.namespace
    outcome = await service.recall(
        scope(where),
        RecallQuery(
            query=q.text,
            embedding=vector,
            limit=TOP,
            filter=MemoryFilter(namespace=where),
            now=q.asked_at,
        ),
    )
    return [
        (r.memory.metadata["turn_id"], r.components.similarity, r.memory.content)
        for r in outcome.results
    ]


async def ranked(service: MemoryService, corpus: Corpus, queries: Vectors) -> list[list[str]]:
    return [
        [t for t, _, _ in await ask(service, q, v)]
        for q, v in zip(corpus.questions, queries, strict=True)
    ]


def split_scores(corpus: Corpus, rankings: list[list[str]]) -> dict[str, dict[str, float]]:
    out = {}
    for name, keep in (("dev", False), ("held-out", True)):
        chosen = [
            (q, r)
            for q, r in zip(corpus.questions, rankings, strict=True)
            if (q.namespace in HELD_OUT) == keep
        ]
        out[name] = scores([q for q, _ in chosen], [r for _, r in chosen])["overall"]
    out["all"] = scores(corpus.questions, rankings)["overall"]
    return out


async def grid(
    world: World,
    corpus: Corpus,
    queries: Vectors,
    base: RecallSettings,
    spreads: Sequence[float],
    shares: Sequence[float],
) -> list[dict[str, Any]]:
    rows = []
    for spread in spreads:
        for share in shares:
            recall = base.model_copy(
                update={
                    "convex_min_spread": spread,
                    "hybrid_vector_weight": share,
                    "hybrid_text_weight": 1 - share,
                }
            )
            result = split_scores(corpus, await ranked(world.service(recall), corpus, queries))
            rows.append({"spread": spread, "vector_share": share, **result})
            print(
                f"    spread {spread:<4} vector {share:<3} dev all@10 {result['dev']['recall_all@10']:.3f} "
                f"mrr {result['dev']['mrr']:.3f} | held-out all@10 {result['held-out']['recall_all@10']:.3f}",
                flush=True,
            )
    return rows


def best(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return max(rows, key=lambda r: (r["dev"]["recall_all@10"], r["dev"]["mrr"]))


# ---------------------------------------------------------------- relevance


def fit_logistic(features: np.ndarray, labels: np.ndarray, steps: int = 3000) -> np.ndarray:
    """Weights (w_cos, w_cov, bias) of a logistic regression, by Newton steps."""
    x = np.hstack([features, np.ones((len(features), 1))])
    w = np.zeros(x.shape[1])
    for _ in range(50):
        p = 1 / (1 + np.exp(-(x @ w)))
        gradient = x.T @ (labels - p) - 1e-3 * w
        hessian = (x * (p * (1 - p))[:, None]).T @ x + 1e-3 * np.eye(len(w))
        w += np.linalg.solve(hessian, gradient)
    return w


@dataclass
class Observed:
    question: Question
    own_top: tuple[float, float]
    other_top: tuple[float, float]
    #: (cosine, coverage) of the gold hits found in the top 10 of its own chat.
    evidence: list[tuple[float, float]]


async def observe(
    world: World, corpus: Corpus, queries: Vectors, recall: RecallSettings
) -> list[Observed]:
    """Per question: its top hit in its own chat, in a chat without its speakers, and
    its evidence in its own top 10, each as (cosine, coverage)."""
    service = world.service(recall)
    namespaces = sorted({q.namespace for q in corpus.questions})
    out = []
    for q, v in zip(corpus.questions, queries, strict=True):
        terms = query_terms(q.text)
        other = unrelated_namespace(q.namespace, namespaces)
        own = await ask(service, q, v)
        off = await ask(service, q, v, namespace=other)
        if not own or not off:
            continue
        evidence = [_feature(terms, h) for h in own[:10] if h[0] in q.gold]
        out.append(Observed(q, _feature(terms, own[0]), _feature(terms, off[0]), evidence))
    return out


def _feature(terms: frozenset[str], hit: tuple[str, float, str]) -> tuple[float, float]:
    return hit[1], coverage(terms, hit[2])


def calibrate(observed: list[Observed]) -> tuple[Relevance, dict[str, Any]]:
    dev = [o for o in observed if o.question.namespace not in HELD_OUT]
    positives = [e for o in dev for e in o.evidence]
    negatives = [o.other_top for o in dev]
    x = np.asarray(positives + negatives)
    y = np.asarray([1.0] * len(positives) + [0.0] * len(negatives))
    w_cos, w_cov, bias = fit_logistic(x, y)
    # sigmoid(w_cos * c + w_cov * v + b) = sigmoid(w_cos * (c - centre) + w_cov * (v - 0.5))
    centre = -(bias + 0.5 * w_cov) / w_cos
    calibration = Relevance(round(float(centre), 4), round(float(w_cos), 3), round(float(w_cov), 3))
    report: dict[str, Any] = {
        "fit": {
            "cosine_centre": calibration.cosine_centre,
            "cosine_weight": calibration.cosine_weight,
            "coverage_weight": calibration.coverage_weight,
        }
    }

    def rel(feature: tuple[float, float]) -> float:
        return absolute_relevance(calibration, *feature)

    for name, part in (
        ("dev", dev),
        ("held-out", [o for o in observed if o.question.namespace in HELD_OUT]),
        ("all", observed),
    ):
        own = [rel(o.own_top) for o in part]
        off = [rel(o.other_top) for o in part]
        with_evidence = [max(rel(e) for e in o.evidence) for o in part if o.evidence]
        threshold = float(np.quantile(with_evidence, 0.10)) if with_evidence else 0.0
        report[name] = {
            "auroc_top_hit_own_vs_other_chat": round(auroc(own, off), 4),
            "auroc_cosine_only": round(
                auroc([o.own_top[0] for o in part], [o.other_top[0] for o in part]), 4
            ),
            "min_relevance_keeping_90pct_evidence": round(threshold, 3),
            "off_chat_dropped_at_it": round(float(np.mean([x < threshold for x in off])), 4),
            "questions": len(part),
        }
    return calibration, report


# ---------------------------------------------------------------- main


async def tune(
    kind: str, memdaily: bool, spreads: Sequence[float], shares: Sequence[float]
) -> dict[str, Any]:
    realtalk = load_realtalk(None)
    docs, queries = embeddings(realtalk, kind)
    world = build_world = await build(realtalk, docs, MODEL_IDS[kind])
    base = Settings(embedder=kind).recall  # type: ignore[arg-type]
    print(
        f"  {kind}: profile defaults {base.convex_min_spread} / {base.hybrid_vector_weight}:{base.hybrid_text_weight}"
    )
    report: dict[str, Any] = {
        "model": MODEL_IDS[kind],
        "profile": split_scores(realtalk, await ranked(world.service(base), realtalk, queries)),
    }
    rows = await grid(world, realtalk, queries, base, spreads, shares) if spreads else []
    profile = {
        "spread": base.convex_min_spread,
        "vector_share": base.hybrid_vector_weight
        / (base.hybrid_vector_weight + base.hybrid_text_weight),
        **report["profile"],
    }
    chosen = best(rows) if rows else profile
    report["grid"] = rows
    report["chosen"] = chosen
    tuned = base.model_copy(
        update={
            "convex_min_spread": chosen["spread"],
            "hybrid_vector_weight": chosen["vector_share"],
            "hybrid_text_weight": 1 - chosen["vector_share"],
        }
    )
    context = tuned.model_copy(update={"context_neighbours": 1})
    report["context expansion (1 neighbour)"] = split_scores(
        realtalk, await ranked(world.service(context), realtalk, queries)
    )
    report["categories"] = scores(
        realtalk.questions, await ranked(world.service(tuned), realtalk, queries)
    )
    _, relevance = calibrate(await observe(world, realtalk, queries, tuned))
    report["relevance"] = relevance
    print(
        f"  {kind}: chosen {chosen['spread']} / {chosen['vector_share']}: {json.dumps(chosen['held-out'])}"
    )
    print(f"  {kind}: relevance {json.dumps(relevance)}", flush=True)
    await build_world.writer.close()
    if memdaily:
        corpus = load_memdaily(None)
        mdocs, mqueries = embeddings(corpus, kind)
        mworld = await build(corpus, mdocs, MODEL_IDS[kind])
        for name, recall in (("profile", base), ("chosen", tuned)):
            result = scores(
                corpus.questions, await ranked(mworld.service(recall), corpus, mqueries)
            )["overall"]
            report[f"memdaily ({name})"] = result
            print(f"  {kind}: MemDaily ({name}) MRR {result['mrr']:.4f}", flush=True)
        await mworld.writer.close()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default="e5,minilm")
    parser.add_argument("--memdaily", action="store_true")
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--spreads", default=",".join(map(str, SPREADS)))
    parser.add_argument("--shares", default=",".join(map(str, VECTOR_SHARES)))
    args = parser.parse_args()
    spreads = [float(x) for x in args.spreads.split(",") if x]
    shares = [float(x) for x in args.shares.split(",") if x]
    report = {
        kind: asyncio.run(tune(kind, args.memdaily, spreads, shares))
        for kind in args.models.split(",")
    }
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=2))
    json.dump(
        {k: {"chosen": v["chosen"], "relevance": v["relevance"]} for k, v in report.items()},
        sys.stdout,
        indent=1,
    )


if __name__ == "__main__":
    main()
