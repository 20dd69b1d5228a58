"""Neighbour support measured: REALTALK and MemDaily, off against on, the model's defaults.

In process on cached vectors, in bench/fusion_tuning.py's world (the daemon's own
MemoryService over the in-process store, one partition per chat, every turn one memory
with its session and sequence). Neighbour support (service/memories/support.py) raises
a candidate's relevance by the best other candidate's within a window of turns of its
session. The weight and window are chosen on REALTALK's dev chats only, by the sum of
recall_all@10, recall_any@10 and MRR there (the three targets at once); the held-out
chats are reported, never used to choose. MemDaily (Chinese) is run with every
setting: one that costs it more than one question's recall_all@10 or 0.001 MRR is not
chosen (its trajectories are one session each, where a wide window lifts every turn
near the best hit). Then other levers, one at a time on top of the chosen setting (the
fusion's vector share and spread floor, the time and blend weights, text feedback).
Per split (dev, held-out, all) and per category.

Usage: python bench/neighbour_support.py [--models e5] [--memdaily-files N] [--json-out P]
       [--defaults-only]  (the tree's defaults alone: e.g. all 26 MemDaily files)
"""

from __future__ import annotations

import argparse
import asyncio
import json
from pathlib import Path
from typing import Any

from context_expansion import SHOWN, by_split, line, ranked
from fusion_tuning import MODEL_IDS, World, build
from quality import scores
from quality_data import Vectors, embeddings, load_memdaily, load_realtalk

from memoryd.config import RecallSettings, Settings

WEIGHTS = (0.1, 0.2, 0.3, 0.5, 0.7)
WINDOWS = (1, 2, 3)
#: Other levers measured on top of the chosen setting (one changed at a time).
LEVERS: dict[str, dict[str, float]] = {
    "vector share 0.4": {"hybrid_vector_weight": 0.4, "hybrid_text_weight": 0.6},
    "vector share 0.6": {"hybrid_vector_weight": 0.6, "hybrid_text_weight": 0.4},
    "spread floor 0.05": {"convex_min_spread": 0.05},
    "spread floor 0.2": {"convex_min_spread": 0.2},
    "temporal weight 0.2": {"temporal_weight": 0.2},
    "temporal weight 0.4": {"temporal_weight": 0.4},
    "blend weights 0": {"blend_recency_weight": 0.0, "blend_importance_weight": 0.0},
    "blend weights 0.1": {"blend_recency_weight": 0.1, "blend_importance_weight": 0.1},
    "text feedback 3 terms": {"feedback_terms": 3},
}
#: A setting may cost MemDaily at most one question's recall_all@10 and this much MRR.
MEMDAILY_MRR_SLACK = 0.001


def dev_sum(result: dict[str, dict[str, Any]]) -> float:
    overall = result["dev"]["overall"]
    return sum(overall[k] for k in SHOWN)


def with_support(base: RecallSettings, weight: float, window: int) -> RecallSettings:
    return base.model_copy(update={"neighbour_weight": weight, "neighbour_window": window})


class Bench:
    """REALTALK's and MemDaily's worlds, each setting ranked on both."""

    def __init__(self, kind: str, memdaily_files: int | None) -> None:
        self.kind = kind
        self.corpora = {"realtalk": load_realtalk(None), "memdaily": load_memdaily(memdaily_files)}
        self.worlds: dict[str, World] = {}
        self.queries: dict[str, Vectors] = {}

    async def open(self) -> None:
        for name, corpus in self.corpora.items():
            docs, self.queries[name] = embeddings(corpus, self.kind)
            self.worlds[name] = await build(corpus, docs, MODEL_IDS[self.kind])

    async def close(self) -> None:
        for world in self.worlds.values():
            await world.writer.close()

    async def run(self, name: str, recall: RecallSettings, window: int = 0) -> dict[str, Any]:
        """REALTALK by split, MemDaily overall, of one setting (printed as a line)."""
        rt, md = self.corpora["realtalk"], self.corpora["memdaily"]
        result = by_split(
            rt, await ranked(self.worlds["realtalk"], recall, rt, self.queries["realtalk"], window)
        )
        found = await ranked(self.worlds["memdaily"], recall, md, self.queries["memdaily"], window)
        result["memdaily"] = scores(md.questions, found)
        overall = result["memdaily"]["overall"]
        print(
            line(name, result) + " | MemDaily " + " ".join(f"{overall[k]:.3f}" for k in SHOWN),
            flush=True,
        )
        return result


def admissible(result: dict[str, Any], off: dict[str, Any], questions: int) -> bool:
    """Whether a setting keeps MemDaily: recall_all@10 within one question, MRR within
    the slack."""
    new, old = result["memdaily"]["overall"], off["memdaily"]["overall"]
    return (
        new["recall_all@10"] >= old["recall_all@10"] - 1 / questions
        and new["mrr"] >= old["mrr"] - MEMDAILY_MRR_SLACK
    )


async def study(
    kind: str, weights: tuple[float, ...], windows: tuple[int, ...], memdaily_files: int | None
) -> dict[str, Any]:
    bench = Bench(kind, memdaily_files)
    await bench.open()
    base = Settings(embedder=kind).recall  # type: ignore[arg-type]
    print(f"## {kind}: {' '.join(SHOWN)} per split (dev | held-out | all | MemDaily)", flush=True)
    report: dict[str, Any] = {"model": MODEL_IDS[kind], "defaults": base.model_dump()}
    report["off"] = off = await bench.run("off", with_support(base, 0.0, 1))
    grid = {}
    for weight in weights:
        for window in windows:
            grid[(weight, window)] = await bench.run(
                f"weight {weight} window {window}", with_support(base, weight, window)
            )
    questions = len(bench.corpora["memdaily"].questions)
    kept = [key for key, result in grid.items() if admissible(result, off, questions)]
    weight, window = max(kept, key=lambda key: (dev_sum(grid[key]), -key[0]))
    report["grid"] = {f"weight {w} window {n}": r for (w, n), r in grid.items()}
    report["admissible on MemDaily"] = [f"weight {w} window {n}" for w, n in kept]
    report["chosen on dev"] = {"weight": weight, "window": window, **grid[(weight, window)]}
    print(f"  chosen on the dev chats: weight {weight} window {window}", flush=True)
    chosen = with_support(base, weight, window)
    report["chosen + context_window 1"] = await bench.run("chosen + context_window 1", chosen, 1)
    report["defaults"] = await bench.run("the defaults of this tree", base)
    report["other levers, with the chosen support"] = {
        name: await bench.run(name, chosen.model_copy(update=change))
        for name, change in LEVERS.items()
    }
    await bench.close()
    return report


async def defaults_only(kind: str, memdaily_files: int | None) -> dict[str, Any]:
    """The tree's defaults alone, on REALTALK and MemDaily."""
    bench = Bench(kind, memdaily_files)
    await bench.open()
    base = Settings(embedder=kind).recall  # type: ignore[arg-type]
    print(f"## {kind}: {' '.join(SHOWN)} per split (dev | held-out | all | MemDaily)", flush=True)
    result = await bench.run("the defaults of this tree", base)
    await bench.close()
    return {"model": MODEL_IDS[kind], "defaults": base.model_dump(), "result": result}


def markdown(report: dict[str, Any]) -> str:
    """Per category: off against the chosen setting."""
    rows = ["| setting | split | category | n | recall_all@10 | recall_any@10 | MRR |"]
    rows.append("|---|---|---|---|---|---|---|")
    chosen = report["chosen on dev"]
    for label, key in (
        ("off", "off"),
        (f"weight {chosen['weight']} window {chosen['window']}", "chosen on dev"),
    ):
        for split in ("dev", "held-out", "all"):
            for category, values in report[key][split].items():
                if isinstance(values, dict):
                    cells = " | ".join(f"{values[k]:.3f}" for k in SHOWN)
                    rows.append(
                        f"| {label} | {split} | {category} | {values['questions']} | {cells} |"
                    )
    return "\n".join(rows)


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--models", default="e5")
    parser.add_argument("--memdaily-files", type=int, default=4, help="0: all 26")
    parser.add_argument("--weights", default=",".join(map(str, WEIGHTS)))
    parser.add_argument("--windows", default=",".join(map(str, WINDOWS)))
    parser.add_argument("--json-out", type=Path)
    parser.add_argument("--defaults-only", action="store_true")
    args = parser.parse_args()
    weights = tuple(float(x) for x in args.weights.split(","))
    windows = tuple(int(x) for x in args.windows.split(","))
    report: dict[str, Any] = {}
    for kind in args.models.split(","):
        files = args.memdaily_files or None
        if args.defaults_only:
            report[kind] = asyncio.run(defaults_only(kind, files))
            continue
        report[kind] = asyncio.run(study(kind, weights, windows, files))
        print(f"\n## {kind} per category\n\n{markdown(report[kind])}")
    if args.json_out:
        args.json_out.write_text(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
