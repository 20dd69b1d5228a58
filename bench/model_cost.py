"""What one embedded text costs the packaged local models (issue 31's ceiling).

Each model in process, one intra-op thread (the daemon's `embedding.local_threads`
default), CPU seconds (user + system) per text for three kinds of text: a Recall
query, a conversation turn (Remember) and a SetMemory value (a JSON object with an
id in it), embedded one at a time (what a single write or query costs today) and in
batches of 8 (what batching across callers would cost). Also: how far a text's
vector moves when it is embedded in a batch instead of alone. Both models quantise
their activations per tensor (dynamic int8), so a batch's vectors depend on what
else is in the batch.

    python bench/model_cost.py [--texts 96] [--json-out F]

Prints a JSON report; the figures are medians of three rounds. CPU time is what
bounds throughput on a 2-core box: a model at C ms per text embeds at most
2000 / C texts a second on 2 cores, whatever the daemon around it does.
"""

from __future__ import annotations

import argparse
import json
import resource
import statistics
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from common import machine

from memoryd.embedding.local import E5SmallEmbedder, LocalMiniLMEmbedder, OnnxEmbedder

ROUNDS = 3
BATCHES = (1, 8)
MODELS: dict[str, Callable[[], OnnxEmbedder]] = {
    "e5-small-v2-int8": lambda: E5SmallEmbedder(threads=1),
    "minilm-int8": lambda: LocalMiniLMEmbedder(threads=1),
}


def _cpu_s() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def texts(n: int) -> dict[str, list[str]]:
    """Three kinds of text, ``n`` of each, every one different (no cache helps)."""
    return {
        "query": [f"what did I do with my sister {i}" for i in range(n)],
        "turn": [
            f"I went hiking with my sister near the lake last weekend and we saw {i} "
            "deer, it was lovely and cold"
            for i in range(n)
        ],
        "set_value": [
            json.dumps({"text": f"note {uuid.uuid4().hex} about the user's plan {i}"})
            for i in range(n)
        ],
    }


def embed(model: OnnxEmbedder, items: list[str]) -> np.ndarray[Any, np.dtype[np.float32]]:
    """``items`` embedded in one batch on this thread: the model's own tokenise and
    infer steps, as its inference thread runs them (no prefix: the cost is the same)."""
    return model._infer(model._tokenize(items))


def cpu_ms_per_text(model: OnnxEmbedder, items: list[str], batch: int) -> float:
    runs = []
    for _ in range(ROUNDS):
        started = _cpu_s()
        for i in range(0, len(items), batch):
            embed(model, items[i : i + batch])
        runs.append((_cpu_s() - started) / len(items) * 1e3)
    return round(statistics.median(runs), 2)


def batch_drift(model: OnnxEmbedder, items: list[str]) -> float:
    """The lowest cosine between a text's vector alone and in a batch of 8."""
    alone = np.vstack([embed(model, [t]) for t in items[:8]])
    together = embed(model, items[:8])
    return round(float((alone * together).sum(axis=1).min()), 5)


def run(n: int) -> dict[str, Any]:
    kinds = texts(n)
    report: dict[str, Any] = {}
    for name, make in MODELS.items():
        model = make()
        for kind, items in kinds.items():
            row: dict[str, Any] = {"tokens": len(model._tokenize(items[:1])[0])}
            for batch in BATCHES:
                row[f"cpu_ms_batch_{batch}"] = cpu_ms_per_text(model, items, batch)
            row["min_cosine_alone_vs_batch"] = batch_drift(model, items)
            report[f"{name} {kind}"] = row
            print(f"{name} {kind}: {row}", flush=True)
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--texts", type=int, default=96)
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    result = {"machine": machine(), "threads": 1, "models": run(args.texts)}
    text = json.dumps(result, indent=2)
    if args.json_out:
        args.json_out.write_text(text)
    print(text)


if __name__ == "__main__":
    main()
