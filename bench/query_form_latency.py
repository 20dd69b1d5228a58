"""What e5's query form (a query's trailing "?" dropped) costs a recall: the query's
embedding time with and without it, one question at a time, alternately (so both see
the same load on a shared machine), over REALTALK's 696 questions; and query_form's
own time. The rest of a recall (the searches, fusion) does not see the query's form.

Usage: python bench/query_form_latency.py [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import time
import timeit

from quality_data import load_realtalk

from memoryd.embedding.local import E5SmallEmbedder, OnnxEmbedder, query_form
from memoryd.embedding.packaged import installed_files
from memoryd.model_catalog import E5_SMALL_V2


async def measure(rounds: int) -> dict[str, list[float]]:
    questions = [q.text for q in load_realtalk(None).questions]
    with_form = E5SmallEmbedder(threads=1)
    model, tokenizer = installed_files(E5_SMALL_V2, None)
    # The embedder as it was before the query form: the same files, no query_strip.
    as_asked = OnnxEmbedder(
        model_id=E5_SMALL_V2.model_id,
        model_path=model,
        tokenizer_path=tokenizer,
        prefixes=(E5_SMALL_V2.query_prefix, E5_SMALL_V2.document_prefix),
    )
    out: dict[str, list[float]] = {"query form": [], "as asked": []}
    try:
        for _ in range(rounds):
            for text in questions:
                for name, embedder in (("query form", with_form), ("as asked", as_asked)):
                    start = time.perf_counter()
                    await embedder.embed([text], kind="query")
                    out[name].append((time.perf_counter() - start) * 1000)
    finally:
        await with_form.close()
        await as_asked.close()
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    times = asyncio.run(measure(args.rounds))
    for name, ms in times.items():
        cuts = statistics.quantiles(ms, n=100)
        print(f"{name:<11} p50 {statistics.median(ms):.3f} ms  p95 {cuts[94]:.3f} ms  n {len(ms)}")
    text = "Where does Kate work as a teacher assistant?"
    runs = 100_000
    seconds = timeit.timeit(lambda: query_form(text, E5_SMALL_V2.query_strip), number=runs)
    print(f"query_form itself: {seconds / runs * 1e6:.2f} us")
    print(f"load average after: {os.getloadavg()}")


if __name__ == "__main__":
    main()
