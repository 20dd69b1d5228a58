"""SetMemory before and after a change: the writes section's SetMemory phases only.

The phases of bench/write_path.py (``set1``: 1 writer, keys /bench/client0/key0..49;
``set8``: 8 writers on 8 agents), run by bench/loadgen on a fresh daemon per run
(LanceDB, default settings, the e5 model unless told), for each tree given, the trees
taken in turn round after round: the box is shared, so a change in its load falls on
both sides, and the medians over the rounds are what to compare.

    python bench/set_memory_ab.py --tree old=/tmp/x/old --tree new=. [--rounds 3]
        [--seconds 20] [--port 47200] [--json-out F]

A tree is a checkout's root (its ``server/`` and ``clients/python/src`` are put on
the daemon's PYTHONPATH; ``git archive <commit>`` into a temp dir gives one). Each
daemon listens on ``--port`` (its metrics on the next port): a shared box gives each
engineer a port range. Prints a JSON report: per tree and phase, every run
(throughput, p50, p99, longest, daemon CPU ms per call, 1-minute load average at its
start) and the medians.
"""

from __future__ import annotations

import argparse
import json
import statistics
import tempfile
from pathlib import Path
from typing import Any

from common import REPO, Daemon, log, machine
from quality_data import load_realtalk
from write_path import AGENTS, loadgen_phase

FIGURES = ("rps", "p50", "p99", "max")


def one_run(
    tree: Path, work: Path, texts: list[str], seconds: float, port: int, embedder: str
) -> dict[str, Any]:
    """set1 then set8 on a fresh daemon running ``tree``."""
    env = {
        "PYTHONPATH": f"{tree / 'server'}:{tree / 'clients' / 'python' / 'src'}",
        "MEMORYD_STORAGE__HOT_CACHE__MEMORY_BUDGET_MB": "1024",
        "MEMORYD_METRICS__LISTEN": f"127.0.0.1:{port + 1}",
    }
    loadgen = REPO / "bench" / ".bin" / "loadgen"
    agents = [f"w{i}" for i in range(AGENTS)]
    out: dict[str, Any] = {}
    daemon = Daemon(work / "data", embedder=embedder, env=env, listen=f"127.0.0.1:{port}")
    with daemon.start() as d:
        for name, clients in (("set1", 1), ("set8", AGENTS)):
            out[name] = loadgen_phase(
                loadgen, d.address, work, name, clients=clients, agents=agents[:clients],
                mix={"SetMemory": 1}, texts=texts, seconds=seconds, pid=d.pid,
            )  # fmt: skip
    return out


def medians(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """Per phase, the median of each figure over the runs (and of the CPU per call)."""
    out: dict[str, Any] = {}
    for phase in ("set1", "set8"):
        stats = [r[phase].get("SetMemory") or {} for r in runs]
        found: dict[str, Any] = {}
        for figure in FIGURES:
            values = [float(s[figure]) for s in stats if isinstance(s.get(figure), int | float)]
            found[figure] = round(statistics.median(values), 2) if values else None
        cpu = [r[phase]["cpu_ms_per_call"] for r in runs if "cpu_ms_per_call" in r[phase]]
        found["cpu_ms_per_call"] = round(statistics.median(cpu), 2) if cpu else None
        found["load_avg_1m"] = [r[phase].get("load_avg_1m") for r in runs]
        out[phase] = found
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--tree", action="append", required=True, help="label=path")
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--port", type=int, default=47200)
    parser.add_argument("--embedder", default="e5")
    parser.add_argument("--json-out", type=Path)
    args = parser.parse_args()
    trees = {label: Path(path).resolve() for label, path in (t.split("=", 1) for t in args.tree)}
    texts = [t.text for t in load_realtalk().turns]
    runs: dict[str, list[dict[str, Any]]] = {label: [] for label in trees}
    with tempfile.TemporaryDirectory(prefix="memoryd-set-ab-") as tmp:
        for round_ in range(args.rounds):
            for label, tree in trees.items():
                work = Path(tmp) / f"{label}-{round_}"
                work.mkdir()
                result = one_run(tree, work, texts, args.seconds, args.port, args.embedder)
                log(f"set-ab: round {round_} {label}: {json.dumps(result)[:600]}")
                runs[label].append(result)
    report = {
        "machine": machine(),
        "embedder": args.embedder,
        "seconds": args.seconds,
        "trees": {label: str(tree) for label, tree in trees.items()},
        "medians": {label: medians(r) for label, r in runs.items()},
        "runs": runs,
    }
    text = json.dumps(report, indent=2, default=str)
    if args.json_out:
        args.json_out.write_text(text)
    print(json.dumps(report["medians"], indent=2))


if __name__ == "__main__":
    main()
