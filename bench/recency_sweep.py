"""How the default recall's recency and importance weights were chosen (issue 33).

The layered-memory design (seed 001) scores a memory 0.6 * cosine + 0.2 * exp(-days
since the last access / 30) + 0.2 * importance. This runs bench/quality.py's protocol
(one daemon over real gRPC, every turn one memory with its date, each question asked
at its time, the vectors supplied) once per scoring setting on REALTALK (all chats;
chosen on the dev chats, the held-out ones reported apart) and MemDaily (4 files),
and prints recall_all@10, recall_any@10 and MRR per setting:

- relevance: the default before (no recency, no importance);
- blended r / i: the new default at recency weight r and importance weight i;
- layered: the document's formula as written; weighted: the WEIGHTED preset.

Usage: python bench/recency_sweep.py [--embedder e5] [--settings NAME,NAME]
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

from quality import daemon, evaluate, ingest, scores, warm_up
from quality_data import HELD_OUT, Corpus, embeddings, load_memdaily, load_realtalk, split

PRESET = "MEMORYD_RECALL__DEFAULT_PRESET"


def blended(recency: float, importance: float) -> tuple[str, dict[str, str]]:
    return (
        f"blended {recency} / {importance}",
        {
            PRESET: "blended",
            "MEMORYD_RECALL__BLEND_RECENCY_WEIGHT": str(recency),
            "MEMORYD_RECALL__BLEND_IMPORTANCE_WEIGHT": str(importance),
        },
    )


SETTINGS: list[tuple[str, dict[str, str]]] = [
    ("relevance (before)", {PRESET: "relevance"}),
    blended(0.02, 0.02),
    blended(0.05, 0.05),
    blended(0.1, 0.1),
    blended(0.2, 0.2),
    ("layered (the document's formula)", {PRESET: "layered"}),
    ("weighted", {PRESET: "weighted"}),
]
COLUMNS = ("recall_all@10", "recall_any@10", "mrr")


def sweep(
    corpus: Corpus, embedder: str, tmp: Path, chosen: list[tuple[str, dict[str, str]]]
) -> None:
    doc_vectors, query_vectors = embeddings(corpus, embedder)
    data_dir = tmp / f"{corpus.name}-{embedder}" / "data"
    with daemon(data_dir, embedder, {}) as stub:
        ingest(stub, corpus, doc_vectors)
    splits = split(corpus, HELD_OUT if corpus.name == "REALTALK" else frozenset())
    index = {id(q): i for i, q in enumerate(corpus.questions)}
    print(f"\n### {corpus.name} ({embedder}, {len(corpus.turns)} memories)\n", flush=True)
    print("| setting | split | n | " + " | ".join(COLUMNS) + " |")
    print("|---|---|---|" + "---|" * len(COLUMNS))
    for name, env in chosen:
        with daemon(data_dir, embedder, env) as stub:
            warm_up(stub, corpus)
            ranked, _, _ = evaluate(stub, corpus.questions, query_vectors)
        for split_name, qs in splits.items():
            s = scores(qs, [ranked[index[id(q)]] for q in qs])["overall"]
            cells = " | ".join(f"{s[c]:.3f}" for c in COLUMNS)
            print(f"| {name} | {split_name} | {int(s['questions'])} | {cells} |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--skip-memdaily", action="store_true")
    parser.add_argument("--skip-realtalk", action="store_true")
    parser.add_argument(
        "--settings",
        type=lambda v: [x for x in v.split(",") if x],
        default=None,
        help="only the settings whose names contain one of these (comma-separated)",
    )
    args = parser.parse_args()
    chosen = [s for s in SETTINGS if args.settings is None or any(p in s[0] for p in args.settings)]
    with tempfile.TemporaryDirectory(prefix="memoryd-recency-") as tmp:
        if not args.skip_realtalk:
            sweep(load_realtalk(None), args.embedder, Path(tmp), chosen)
        if not args.skip_memdaily:
            sweep(load_memdaily(4), args.embedder, Path(tmp), chosen)


if __name__ == "__main__":
    main()
