"""Context expansion measured: REALTALK with expansion off and on, the model's defaults.

In process on cached vectors, as bench/fusion_tuning.py (whose world it builds: the
daemon's own MemoryService over the in-process store, one partition per chat, every
turn one memory with its session and sequence, RememberRequest.session_id / sequence).
Expansion is the request's context_window, everything else the model's defaults
(model_catalog profile). The expansion settings (window, seeds, discount) are chosen on
the dev chats only; the held-out chats are reported, never used to choose; the setting
a client gets from context_window alone (recall.context_seeds 1, discount 0.9) is
reported beside it. Then the other cheap levers on top (pseudo-relevance feedback),
chosen the same way. Per split (dev, held-out, all) and per category.

Usage: python bench/context_expansion.py [--models e5] [--json-out P]
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from fusion_tuning import MODEL_IDS, TOP, World, build, scope
from quality import scores
from quality_data import HELD_OUT, Corpus, Question, Vectors, embeddings, load_realtalk

from memoryd.config import RecallSettings, Settings
from memoryd.domain.models import MemoryFilter
from memoryd.domain.requests import RecallQuery

WINDOWS = (1, 2)
SEEDS = (1, 3)
DISCOUNTS = (0.9, 0.7, 0.5, 0.4, 0.3)
FEEDBACK_TERMS = (3, 5)
#: The fields of a report line, in order.
SHOWN = ("recall_all@10", "recall_any@10", "mrr")


def question_query(q: Question, vector: Vectors, **extra: Any) -> RecallQuery:
    """A question's Recall in its chat's namespace, asked when the question was, by
    its cached vector, top TOP (``extra``: further RecallQuery fields)."""
    return RecallQuery(
        query=q.text,
        embedding=vector,
        limit=TOP,
        filter=MemoryFilter(namespace=q.namespace),
        now=q.asked_at,
        **extra,
    )


async def ranked(
    world: World, recall: RecallSettings, corpus: Corpus, queries: Vectors, window: int
) -> list[list[str]]:
    """Every question's turn ids, best first, recalled with ``context_window``."""
    service = world.service(recall)
    out = []
    for q, vector in zip(corpus.questions, queries, strict=True):
        outcome = await service.recall(
            scope(q.namespace), question_query(q, vector, context_window=window)
        )
        out.append([r.memory.metadata["turn_id"] for r in outcome.results])
    return out


def by_split(corpus: Corpus, rankings: list[list[str]]) -> dict[str, dict[str, Any]]:
    """scores() (overall and per category) of the dev chats, the held-out ones and all."""
    pairs = list(zip(corpus.questions, rankings, strict=True))
    parts: dict[str, list[tuple[Question, list[str]]]] = {
        "dev": [(q, r) for q, r in pairs if q.namespace not in HELD_OUT],
        "held-out": [(q, r) for q, r in pairs if q.namespace in HELD_OUT],
        "all": pairs,
    }
    return {
        name: scores([q for q, _ in part], [r for _, r in part]) for name, part in parts.items()
    }


def paired(corpus: Corpus, off: list[list[str]], on: list[list[str]]) -> dict[str, Any]:
    """Per split: the questions whose recall_all@10 expansion gained and lost."""
    out: dict[str, Any] = {}
    for split, keep in (("dev", False), ("held-out", True)):
        gained = lost = 0
        for q, a, b in zip(corpus.questions, off, on, strict=True):
            if (q.namespace in HELD_OUT) != keep:
                continue
            before, after = q.gold <= set(a[:10]), q.gold <= set(b[:10])
            gained += after and not before
            lost += before and not after
        out[split] = {"gained": gained, "lost": lost}
    return out


def line(name: str, result: dict[str, dict[str, Any]]) -> str:
    cells = " | ".join(
        f"{split} " + " ".join(f"{result[split]['overall'][k]:.3f}" for k in SHOWN)
        for split in ("dev", "held-out", "all")
    )
    return f"    {name:<44} {cells}"


def dev_key(result: dict[str, dict[str, Any]]) -> tuple[float, float]:
    overall = result["dev"]["overall"]
    return overall["recall_all@10"], overall["mrr"]


async def study(kind: str, grid_of: dict[str, tuple[Any, ...]]) -> dict[str, Any]:
    corpus = load_realtalk(None)
    docs, queries = embeddings(corpus, kind)
    world = await build(corpus, docs, MODEL_IDS[kind])
    base = Settings(embedder=kind).recall  # type: ignore[arg-type]
    print(f"## {kind}: {' '.join(SHOWN)} per split (dev | held-out | all)", flush=True)
    report: dict[str, Any] = {"model": MODEL_IDS[kind], "defaults": base.model_dump()}

    rankings: dict[str, list[list[str]]] = {}

    async def run(name: str, recall: RecallSettings, window: int) -> dict[str, Any]:
        rankings[name] = await ranked(world, recall, corpus, queries, window)
        result = by_split(corpus, rankings[name])
        print(line(name, result), flush=True)
        return result

    report["off"] = await run("off (the defaults)", base, 0)
    report["context_window 1 (seeds 1, discount 0.9)"] = await run("context_window 1", base, 1)
    grid = []
    for window in grid_of["windows"]:
        for seeds in grid_of["seeds"]:
            for discount in grid_of["discounts"]:
                recall = base.model_copy(
                    update={"context_seeds": seeds, "context_discount": discount}
                )
                name = f"window {window} seeds {seeds} discount {discount}"
                grid.append((name, recall, window, await run(name, recall, window)))
    name, chosen, window, result = max(grid, key=lambda row: dev_key(row[3]))
    report["grid"] = {row[0]: row[3] for row in grid}
    report["chosen on dev"] = {"setting": name, **result}
    report["questions changed, chosen vs off"] = paired(
        corpus, rankings["off (the defaults)"], rankings[name]
    )
    print(f"  chosen on the dev chats: {name}", flush=True)
    print(f"  all@10 changed: {report['questions changed, chosen vs off']}", flush=True)
    feedback = []
    for terms in grid_of["feedback"]:
        for on in (False, True):
            recall = (chosen if on else base).model_copy(update={"feedback_terms": terms})
            label = f"feedback {terms} terms" + (f" + {name}" if on else "")
            feedback.append((label, await run(label, recall, window if on else 0)))
    report["feedback"] = dict(feedback)
    best_label, best = max([*feedback, (name, result)], key=lambda row: dev_key(row[1]))
    report["best lever on dev"] = {"setting": best_label, **best}
    print(f"  best lever on the dev chats: {best_label}", flush=True)
    await world.writer.close()
    return report


def markdown(report: dict[str, Any]) -> str:
    """Per category, off against the chosen expansion and the best lever."""
    rows = ["| setting | split | category | n | recall_all@10 | recall_any@10 | MRR |"]
    rows.append("|---|---|---|---|---|---|---|")
    for label, key in (
        ("off", "off"),
        ("context_window 1", "context_window 1 (seeds 1, discount 0.9)"),
        (f"chosen: {report['chosen on dev']['setting']}", "chosen on dev"),
        (f"best lever: {report['best lever on dev']['setting']}", "best lever on dev"),
    ):
        for split in ("dev", "held-out", "all"):
            for category, values in report[key][split].items():
                if not isinstance(values, dict):
                    continue
                rows.append(
                    f"| {label} | {split} | {category} | {values.get('questions', '')} | "
                    + " | ".join(f"{values[k]:.3f}" for k in SHOWN)
                    + " |"
                )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default="e5")
    parser.add_argument("--json-out", type=Path)
    for name, values in (
        ("windows", WINDOWS),
        ("seeds", SEEDS),
        ("discounts", DISCOUNTS),
        ("feedback", FEEDBACK_TERMS),
    ):
        parser.add_argument(f"--{name}", default=",".join(map(str, values)))
    args = parser.parse_args()
    grid_of: dict[str, tuple[Any, ...]] = {
        "windows": tuple(int(x) for x in args.windows.split(",")),
        "seeds": tuple(int(x) for x in args.seeds.split(",")),
        "discounts": tuple(float(x) for x in args.discounts.split(",")),
        "feedback": tuple(int(x) for x in args.feedback.split(",") if x),
    }
    report = {kind: asyncio.run(study(kind, grid_of)) for kind in args.models.split(",")}
    for kind, result in report.items():
        print(f"\n## {kind} per category\n\n{markdown(result)}")
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
