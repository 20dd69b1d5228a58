"""What bench/quality.py reports beside recall: how well the absolute relevance
separates a question's hits in its own chat from its top hit in another chat, the
extraction without an LLM on the session fixtures, and issue 32's targets against
what a run measured."""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
from google.protobuf import timestamp_pb2
from quality_data import Corpus, Vectors

from memoryd.domain.agent_state import MessageRole, SessionMessage
from memoryd.domain.models import MemoryType
from memoryd.service.common.tokens import EstimateCounter
from memoryd.service.sessions.extract import deterministic_items
from memoryd.service.sessions.summarize import extractive_summary
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

REPO = Path(__file__).resolve().parent.parent
AGENT = "quality"


def _timestamp(value: datetime) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(value)
    return ts


def unrelated_namespace(namespace: str, namespaces: Sequence[str]) -> str:
    """The next chat (in sorted order) that shares no speaker with ``namespace``
    ("Chat_3_Kevin_Paola" -> "Chat_5_Nicolas_Nebraas", not "Chat_4_Emi_Paola"): its
    memories cannot answer the question, so its top hit is truly off-topic."""
    ordered = sorted(namespaces)
    speakers = set(namespace.split("_")[2:])
    start = ordered.index(namespace)
    for step in range(1, len(ordered)):
        other = ordered[(start + step) % len(ordered)]
        if not speakers & set(other.split("_")[2:]):
            return other
    return ordered[(start + 1) % len(ordered)]


def relevance_separation(
    stub: mgrpc.MemoryServiceStub,
    corpus: Corpus,
    query_vectors: Vectors,
    ranked: list[list[str]],
    relevances: list[list[float]],
    held_out: frozenset[str],
) -> dict[str, Any]:
    """Each question's top hit in its own namespace against its top hit in a chat
    without its speakers (unrelated_namespace: no answer there): the AUROC of their
    relevances; and the
    min_relevance chosen on the dev chats that keeps 90 % of the questions' best
    evidence hit (in the top 10), with the share of other-chat top hits it drops."""
    namespaces = sorted({q.namespace for q in corpus.questions})
    own, other, evidence, dev = [], [], [], []
    for i, q in enumerate(corpus.questions):
        elsewhere = unrelated_namespace(q.namespace, namespaces)
        request = mpb.RecallRequest(
            agent_id=AGENT, query=q.text, namespace=elsewhere, limit=1, now=_timestamp(q.asked_at)
        )
        request.query_embedding.extend(query_vectors[i].tolist())
        response = stub.Recall(request, timeout=60)
        if not relevances[i] or not response.results:
            continue
        own.append(relevances[i][0])
        other.append(response.results[0].relevance)
        found = [r for t, r in zip(ranked[i][:10], relevances[i][:10], strict=False) if t in q.gold]
        evidence.append(max(found) if found else None)
        dev.append(q.namespace not in held_out)
    chosen = float(
        np.quantile([e for e, d in zip(evidence, dev, strict=True) if d and e is not None], 0.1)
    )
    out: dict[str, Any] = {
        "min_relevance (chosen on dev: keeps 90 % of evidence)": round(chosen, 3)
    }
    for name, keep in (("dev", True), ("held-out", False), ("all", None)):
        rows = [k for k, d in enumerate(dev) if keep is None or d == keep]
        found = [evidence[k] for k in rows if evidence[k] is not None]
        out[name] = {
            "questions": len(rows),
            "auroc_top_hit_own_vs_other_chat": round(
                auroc([own[k] for k in rows], [other[k] for k in rows]), 4
            ),
            "evidence_kept": round(float(np.mean([e >= chosen for e in found])), 4),
            "other_chat_dropped": round(float(np.mean([other[k] < chosen for k in rows])), 4),
        }
    return out


def auroc(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """P(a positive scores above a negative), ties counting half."""
    pos, neg = np.asarray(positives), np.asarray(negatives)
    if not len(pos) or not len(neg):
        return float("nan")
    above = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(above / (len(pos) * len(neg)))


SESSIONS = REPO / "tests" / "data" / "sessions.json"


def extraction() -> dict[str, Any]:
    """EndSession's extraction without an LLM on the session fixtures: the share of the
    facts users stated that are kept, and of the kept memories that are such facts."""
    stated = kept = right = 0
    t0 = datetime(2026, 3, 1, tzinfo=UTC)
    for session in json.loads(SESSIONS.read_text())["sessions"]:
        messages = [
            SessionMessage(MessageRole(role), text, seq, t0)
            for seq, (role, text) in enumerate(session["messages"])
        ]
        summary = extractive_summary("", messages, counter=EstimateCounter(), max_tokens=512)
        items = deterministic_items(messages, summary, max_items=20, max_bytes=8192)
        facts = {i.content for i in items if i.memory_type is not MemoryType.EPISODE}
        stated += len(session["facts"])
        kept += len(facts)
        right += len(facts & set(session["facts"]))
    return {
        "sessions": len(json.loads(SESSIONS.read_text())["sessions"]),
        "stated_facts_kept": round(right / stated, 4) if stated else 0.0,
        "kept_that_are_facts": round(right / kept, 4) if kept else 0.0,
    }


def extraction_markdown(result: dict[str, Any]) -> str:
    return (
        f"### Extraction without an LLM ({result['sessions']} fixture sessions)\n\n"
        f"stated facts kept {result['stated_facts_kept']:.3f}, kept memories that are facts "
        f"{result['kept_that_are_facts']:.3f}"
    )


def _overall(report: dict[str, Any], run: str, split_name: str) -> dict[str, float] | None:
    found = report.get("runs", {}).get(run, {}).get(split_name)
    return None if found is None else found["scores"].get("overall")


def targets(report: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 32's targets against what this run measured (None: not measured)."""
    rows: list[tuple[str, float | None, float]] = []
    realtalk = report.get("realtalk", {})
    new = "new (vectors supplied)"
    for split_name in ("all", "held-out"):
        s = _overall(realtalk, new, split_name)
        rows.append((f"REALTALK {split_name} recall_all@10", s and s["recall_all@10"], 0.52))
    s = _overall(realtalk, new, "all")
    rows.append(("REALTALK recall_any@10", s and s["recall_any@10"], 0.78))
    rows.append(("REALTALK MRR", s and s["mrr"], 0.56))
    hop = realtalk.get("runs", {}).get(new, {}).get("all", {}).get("scores", {}).get("multi-hop")
    rows.append(("REALTALK multi-hop recall_all@10", hop and hop["recall_all@10"], 0.22))
    # Context expansion is opt-in (context_window): its A/B run beside the default's.
    expanded = "new, context expansion on (vectors supplied)"
    for split_name in ("all", "held-out"):
        s = _overall(realtalk, expanded, split_name)
        if s is not None:
            label = f"REALTALK {split_name} recall_all@10, context_window 1 (opt-in)"
            rows.append((label, s["recall_all@10"], 0.52))
    for key, floor in (("memdaily_e5", 0.93), ("memdaily_multilingual", 0.97)):
        m = _overall(report.get(key, {}), new, "all")
        rows.append((f"MemDaily MRR ({key.removeprefix('memdaily_')})", m and m["mrr"], floor))
    auroc_all = realtalk.get("relevance", {}).get("all", {})
    rows.append(("relevance AUROC", auroc_all.get("auroc_top_hit_own_vs_other_chat"), 0.90))
    rows.append(("min_relevance keeps evidence", auroc_all.get("evidence_kept"), 0.90))
    rows.append(("min_relevance drops other-chat hits", auroc_all.get("other_chat_dropped"), 0.80))
    rows.append(("extraction: stated facts kept", report["extraction"]["stated_facts_kept"], 1.0))
    rows.append(
        ("extraction: kept that are facts", report["extraction"]["kept_that_are_facts"], 0.8)
    )
    out = [
        {"target": t, "measured": v, "at_least": floor, "met": None if v is None else v >= floor}
        for t, v, floor in rows
    ]
    timing = realtalk.get("latency_interleaved", {}).get("new (end to end)")
    model = realtalk.get("model_query_ms")
    if timing and model:
        over = round(timing["p50"] - model["p50"], 2)
        out.append(
            {"target": "Recall p50 over the model's query p50 (ms)", "measured": over,
             "at_most": 1.5, "met": over <= 1.5}
        )  # fmt: skip
    return out


def targets_markdown(rows: list[dict[str, Any]]) -> str:
    lines = [
        "### Targets (issue 32)",
        "",
        "| target | measured | bound | met |",
        "|---|---|---|---|",
    ]
    for r in rows:
        bound = f">= {r['at_least']}" if "at_least" in r else f"<= {r['at_most']}"
        met = "not measured" if r["met"] is None else ("yes" if r["met"] else "**no**")
        lines.append(f"| {r['target']} | {r['measured']} | {bound} | {met} |")
    return "\n".join(lines)
