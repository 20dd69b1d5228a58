"""The REALTALK questions whose evidence recall does not find at all, and why.

In process on cached vectors, in bench/fusion_tuning.py's world (the daemon's own
MemoryService over the in-process store, one partition per chat), the model's defaults.
A question is a miss when none of its evidence turns is among its top 50 results: no
re-ranking of those results can reach it, only better candidates can. For every miss
on the chosen split it reports what the question and its evidence share: the evidence
turns' ranks by cosine alone and by BM25 alone among the chat's turns, the content
terms (memoryd.text.tokenize) they have in common, the people the question names
that are not the chat's speakers, its time words; and a first category by those
signals (the report's categories are then read off the dumped text by hand).

Usage: python bench/candidate_misses.py [--split dev] [--json-out P]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import numpy as np
from fusion_tuning import MODEL_IDS, TOP, World, ask, build
from quality_data import HELD_OUT, Corpus, Question, Turn, embeddings, load_realtalk

from memoryd.config import Settings
from memoryd.storage.bm25 import bm25
from memoryd.text import tokenize

#: Words of a question that say when, though no date ("last week", "first time").
TIME_WORDS = re.compile(
    r"\b(when|before|after|first|last|recent(ly)?|ago|week|month|year|day|since|during|"
    r"yesterday|today|tomorrow|morning|night|weekend|birthday|christmas|new year)\b",
    re.IGNORECASE,
)
#: Capitalised words of a question that are not names.
NOT_NAMES = frozenset(
    re.findall(
        r"\w+",
        "What When Where Who Why How Which Does Did Do Is Are Was Were Has Have Had Can "
        "Would Will Could Should In On At The A An If And Or For Of",
    )
)


def in_split(q: Question, split: str) -> bool:
    return split == "all" or (q.namespace in HELD_OUT) == (split == "held-out")


def speaker_names(corpus: Corpus, namespace: str) -> set[str]:
    """The casefolded words of the chat's speaker names ("Fahim Khan": fahim, khan)."""
    names = Counter(t.text.split(":", 1)[0] for t in corpus.turns if t.namespace == namespace)
    return {w.casefold() for name in names for w in name.split()}


def ranks(scores: np.ndarray, ids: list[str], gold: frozenset[str]) -> list[int]:
    """1-based ranks of the gold turns by ``scores`` (higher first)."""
    order = np.argsort(-scores, kind="stable")
    position = {ids[k]: r for r, k in enumerate(order, start=1)}
    return sorted(position[g] for g in gold)


def distance(a: str, b: str) -> int | None:
    """Turns between two REALTALK turn ids ("D3:12") of one session; None across them."""
    (sa, ta), (sb, tb) = a.split(":"), b.split(":")
    return abs(int(ta) - int(tb)) if sa == sb else None


def nearest_hit(gold: frozenset[str], top: list[str]) -> int | None:
    """The fewest turns between an evidence turn and one of ``top`` in its session."""
    found = [d for g in gold for t in top if (d := distance(g, t)) is not None]
    return min(found, default=None)


def signals(
    q: Question, turns: list[Turn], speakers: set[str], cos_ranks: list[int], bm_ranks: list[int]
) -> dict[str, Any]:
    by_id = {t.turn_id: t for t in turns}
    asked = set(tokenize(q.text)) - speakers
    gold_text = [by_id[g].text for g in sorted(q.gold)]
    shared = sorted(asked & {t for text in gold_text for t in tokenize(text.split(":", 1)[1])})
    named = [
        w
        for w in re.findall(r"\b[A-Z][a-z]+\b", q.text)
        if w not in NOT_NAMES and w.casefold() not in speakers
    ]
    short = [len(tokenize(text.split(":", 1)[1])) for text in gold_text]
    return {
        "question": q.text,
        "category": q.category,
        "evidence": gold_text,
        "evidence_ids": sorted(q.gold),
        "cosine_ranks": cos_ranks,
        "bm25_ranks": bm_ranks,
        "shared_terms": shared,
        "unknown_capitalised": named,
        "time_words": sorted({m.group(0).lower() for m in TIME_WORDS.finditer(q.text)}),
        "evidence_terms": short,
        "chat_turns": len(turns),
    }


def first_category(s: dict[str, Any]) -> str:
    """A first guess from the signals, by the first that applies."""
    if max(s["evidence_terms"]) <= 2:
        return "evidence too short to match (reaction, image, 'yes')"
    if not s["shared_terms"]:
        return "no content word shared (paraphrase or inference)"
    if len(s["evidence_ids"]) >= 3:
        return "multi-turn evidence, words shared with some"
    return "words shared, ranked below"


async def study(split: str) -> dict[str, Any]:
    corpus = load_realtalk(None)
    docs, queries = embeddings(corpus, "e5")
    world: World = await build(corpus, docs, MODEL_IDS["e5"])
    service = world.service(Settings(embedder="e5").recall)  # type: ignore[arg-type]
    by_chat: dict[str, list[int]] = {}
    for k, t in enumerate(corpus.turns):
        by_chat.setdefault(t.namespace, []).append(k)
    tokens = [tokenize(t.text) for t in corpus.turns]
    misses = []
    asked = 0
    for q, vector in zip(corpus.questions, queries, strict=True):
        if not in_split(q, split):
            continue
        asked += 1
        top = [t for t, _, _ in await ask(service, q, vector)]
        if q.gold & set(top[:TOP]):
            continue
        rows = by_chat[q.namespace]
        ids = [corpus.turns[k].turn_id for k in rows]
        cos = docs[rows] @ vector
        bm = np.asarray(bm25([tokens[k] for k in rows], tokenize(q.text)))
        turns = [corpus.turns[k] for k in rows]
        s = signals(
            q,
            turns,
            speaker_names(corpus, q.namespace),
            ranks(cos, ids, q.gold),
            ranks(bm, ids, q.gold),
        )
        s["turns_from_top_3"] = nearest_hit(q.gold, top[:3])
        s["turns_from_top_10"] = nearest_hit(q.gold, top[:10])
        s["first_category"] = first_category(s)
        misses.append(s)
    await world.writer.close()
    return {"split": split, "questions": asked, "misses": misses}


def summary(report: dict[str, Any]) -> str:
    misses = report["misses"]
    lines = [
        f"{len(misses)} of {report['questions']} {report['split']} questions: no evidence in the top {TOP}"
    ]
    for name, count in Counter(m["category"] for m in misses).most_common():
        lines.append(f"  REALTALK category {name}: {count}")
    for name, count in Counter(m["first_category"] for m in misses).most_common():
        lines.append(f"  {name}: {count}")
    best_cos = [min(m["cosine_ranks"]) for m in misses]
    lines.append(f"  best evidence rank by cosine: median {np.median(best_cos):.0f}")
    lines.append(
        f"  with a name that is no speaker: {sum(bool(m['unknown_capitalised']) for m in misses)}"
    )
    for k in (3, 10):
        near = [m[f"turns_from_top_{k}"] for m in misses]
        lines.append(
            f"  evidence within 1 / 2 / 5 turns of a top-{k} hit: "
            + " / ".join(str(sum(d is not None and d <= w for d in near)) for w in (1, 2, 5))
        )
    lines.append(f"  with time words: {sum(bool(m['time_words']) for m in misses)}")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--split", default="dev", choices=("dev", "held-out", "all"))
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    report = asyncio.run(study(args.split))
    print(summary(report))
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
