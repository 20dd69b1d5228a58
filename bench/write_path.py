"""`make bench`'s writes section, the write path (issue 31): memoryd beside its floor
and the previous release, in one run.

Systems, each on a fresh data directory (LanceDB, the local model, default settings):
  floor      bench/write_floor.py: grpc.aio, each request appended to a file and
             group-committed with fsync (what a durable write cannot cost less than)
  memoryd    this tree
  previous   the previous release (PREVIOUS_COMMIT, checked out with `git worktree`
             in the bench's temp dir and run on the same interpreter); skipped, saying
             why, where git cannot check it out
Phases (bench/loadgen mixed mode: Go clients, closed loop; every call a new text):
  set1       SetMemory, 1 writer (keys /bench/client0/key0..49)
  set8       SetMemory, 8 writers on 8 agents; memoryd for ``write_long_s`` (the
             longest write of a 5-minute run is a target), the others ``write_s``
  rem8       Remember with the daemon's model, 8 writers on 8 new agents
  first      Remember: the first write to each of 20 new agents against the next
             four to it (Python client, one at a time): p50 of both
  soak       (``--soak-minutes``) memoryd at half the capacity set8/rem8 measured,
             SetMemory and Remember in equal parts at a fixed rate: p99 per window
             and the daemon's RSS over time, plotted to soak-<date>.png
Every phase reports the 1-minute load average at its start: the box is shared.

    python bench/write_path.py [--write-seconds 300] [--phase-seconds 20] [--soak-minutes 30]

runs this part alone (bench/results/report-writes-<date>.md and writes-<date>.json).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import write_report
from common import REPO, Daemon, channel, cpu_s, log, machine, pct, rss_mb
from quality_data import load_realtalk

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

#: The previous release: main before issue 31's write path.
PREVIOUS_COMMIT = "77d2e06"
#: The embedders the previous release knows, and its default (it refuses e5, which
#: came later): it runs with this tree's embedder where it knows it, else its own.
PREVIOUS_EMBEDDERS = frozenset({"local", "openai", "hashing", "multilingual"})
PREVIOUS_DEFAULT_EMBEDDER = "local"
AGENTS = 8
FIRST_AGENTS, FOLLOWING = 20, 4
SOAK_WINDOW_S = 10.0
RSS_EVERY_S = 5.0


def previous_embedder(embedder: str) -> str:
    """The embedder the previous release runs with: ``embedder`` when it knows it,
    else its own default model."""
    return embedder if embedder in PREVIOUS_EMBEDDERS else PREVIOUS_DEFAULT_EMBEDDER


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def loadgen_phase(
    loadgen: Path, address: str, work: Path, name: str, *, clients: int, agents: list[str],
    mix: dict[str, float], texts: list[str], seconds: float, rate: float = 0.0,
    pid: int | None = None,
) -> dict[str, Any]:  # fmt: skip
    """One loadgen run; with the server's ``pid``, also its CPU milliseconds per call
    (what the box's load does not change much, unlike the latencies)."""
    spec = {
        "clients": clients, "seconds": seconds, "agents": agents, "mix": mix, "texts": texts,
        "queries": ["unused"], "batch": 20, "keys": 50, "seed": 7, "rate": rate,
        "timeline_s": SOAK_WINDOW_S,
    }  # fmt: skip
    path = work / f"writes-{name}.json"
    path.write_text(json.dumps(spec))
    load = load_average()
    cpu_before = cpu_s(pid) if pid is not None else 0.0
    done = subprocess.run(
        [str(loadgen), "mixed", address, str(path)],
        capture_output=True, text=True, cwd=REPO, timeout=seconds + 900,
    )  # fmt: skip
    if done.returncode != 0:
        return {"error": done.stderr[-800:], "load_avg_1m": load}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    out: dict[str, Any] = {"load_avg_1m": load, "seconds": result.get("seconds")}
    calls = 0
    for method, stats in (result.get("methods") or {}).items():
        out[method] = stats
        calls += int(stats.get("calls") or 0)
    if pid is not None and calls:
        out["cpu_ms_per_call"] = round((cpu_s(pid) - cpu_before) * 1000 / calls, 2)
    return out


def first_writes(address: str, prefix: str, texts: list[str]) -> dict[str, Any]:
    """Remember: the first write to each new agent against the next ones to it."""
    rng = random.Random(3)
    first: list[float] = []
    steady: list[float] = []
    load = load_average()
    with channel(address) as ch:
        stub = mgrpc.MemoryServiceStub(ch)
        for a in range(FIRST_AGENTS):
            agent = f"{prefix}-new-{a}"
            for n in range(1 + FOLLOWING):
                request = mpb.RememberRequest(
                    agent_id=agent, content=f"{rng.choice(texts)} (agent {a}, write {n})"
                )
                t0 = time.perf_counter()
                stub.Remember(request, timeout=120)
                (first if n == 0 else steady).append(time.perf_counter() - t0)
    out: dict[str, Any] = {"first_ms": pct(first), "steady_ms": pct(steady), "load_avg_1m": load}
    if steady:
        out["first_over_steady_p50"] = round(out["first_ms"]["p50"] / out["steady_ms"]["p50"], 2)
    return out


@contextmanager
def floor_server(work: Path) -> Iterator[tuple[str, int]]:
    ready = work / "floor.ready"
    process = subprocess.Popen(
        [sys.executable, str(REPO / "bench" / "write_floor.py"), "--dir", str(work / "floor"),
         "--ready-file", str(ready)],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not ready.exists():
            if process.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("the write floor server did not start")
            time.sleep(0.02)
        yield ready.read_text(), process.pid
    finally:
        process.terminate()
        process.wait(timeout=30)


@contextmanager
def previous_release(work: Path) -> Iterator[str | None]:
    """The PYTHONPATH that runs the previous release, checked out for this run: its
    server/ and its own generated protos and client (the installed ones are this
    tree's, whose protos it does not know). None when git cannot check it out (not a
    git checkout, or the commit is not there)."""
    tree = work / "previous-release"
    made = subprocess.run(
        ["git", "worktree", "add", "--detach", str(tree), PREVIOUS_COMMIT],
        cwd=REPO, capture_output=True, text=True,
    )  # fmt: skip
    if made.returncode != 0:
        log(f"writes: previous release not checked out: {made.stderr.strip()[-300:]}")
        yield None
        return
    try:
        yield os.pathsep.join(str(tree / part) for part in ("server", "clients/python/src"))
    finally:
        subprocess.run(
            ["git", "worktree", "remove", "--force", str(tree)], cwd=REPO, capture_output=True
        )


def system_phases(
    loadgen: Path, address: str, work: Path, name: str, texts: list[str], cfg: dict[str, Any],
    *, long_run: bool, pid: int,
) -> dict[str, Any]:  # fmt: skip
    agents = [f"{name}-w{i}" for i in range(AGENTS)]
    out: dict[str, Any] = {}
    s = cfg["write_s"]
    out["set1"] = loadgen_phase(loadgen, address, work, f"{name}-set1", clients=1,
                                agents=agents[:1], mix={"SetMemory": 1}, texts=texts, seconds=s, pid=pid)  # fmt: skip
    log(f"writes/{name}: set1 {out['set1']}")
    long_s = cfg["write_long_s"] if long_run else s
    out["set8"] = loadgen_phase(loadgen, address, work, f"{name}-set8", clients=AGENTS,
                                agents=agents, mix={"SetMemory": 1}, texts=texts, seconds=long_s, pid=pid)  # fmt: skip
    log(f"writes/{name}: set8 {_brief(out['set8'])}")
    new_agents = [f"{name}-r{i}" for i in range(AGENTS)]
    out["rem8"] = loadgen_phase(loadgen, address, work, f"{name}-rem8", clients=AGENTS,
                                agents=new_agents, mix={"Remember": 1}, texts=texts, seconds=s, pid=pid)  # fmt: skip
    log(f"writes/{name}: rem8 {_brief(out['rem8'])}")
    return out


def _brief(phase: dict[str, Any]) -> dict[str, Any]:
    return {
        k: (
            {x: v.get(x) for x in ("rps", "p50", "p99", "max", "errors")}
            if isinstance(v, dict)
            else v
        )
        for k, v in phase.items()
    }


def soak(
    loadgen: Path, d: Daemon, work: Path, texts: list[str], minutes: float, rate: float
) -> dict[str, Any]:
    """Half capacity for ``minutes``: p99 per window and RSS over time."""
    samples: list[tuple[float, float]] = []
    stop = threading.Event()
    started = time.monotonic()

    def sample_rss() -> None:
        while not stop.wait(RSS_EVERY_S):
            samples.append((round(time.monotonic() - started, 1), rss_mb(d.pid)))

    sampler = threading.Thread(target=sample_rss, daemon=True)
    sampler.start()
    agents = [f"soak-{i}" for i in range(AGENTS)]
    try:
        result = loadgen_phase(loadgen, d.address, work, "soak", clients=AGENTS, agents=agents,
                               mix={"SetMemory": 1, "Remember": 1}, texts=texts,
                               seconds=minutes * 60, rate=rate)  # fmt: skip
    finally:
        stop.set()
        sampler.join()
    result["rate"] = rate
    result["rss_mb"] = samples
    return result


def plot_soak(result: dict[str, Any], path: Path) -> str:
    """The soak's p99 per window and RSS over time as a PNG; returns its name or why not."""
    try:
        import matplotlib  # a bench-only extra (pyproject's [bench])

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "not plotted: matplotlib is not installed (pip install -e '.[bench]')"
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6), sharex=True)
    for method in ("SetMemory", "Remember"):
        timeline = (result.get(method) or {}).get("timeline") or []
        top.plot(
            [w["t"] / 60 for w in timeline], [w["p99"] for w in timeline], label=f"{method} p99"
        )
    top.set_ylabel("ms (per 10 s window)")
    top.legend()
    top.set_title(f"soak at {result.get('rate')} writes/s (half the measured capacity)")
    rss = result.get("rss_mb") or []
    bottom.plot([t / 60 for t, _ in rss], [m for _, m in rss], color="tab:red")
    bottom.set_ylabel("daemon RSS (MB)")
    bottom.set_xlabel("minutes")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path.name


def run(
    tmp: Path, cfg: dict[str, Any], env: dict[str, str], loadgen: Path, results: Path,
    stamp: str, soak_minutes: float,
) -> dict[str, Any]:  # fmt: skip
    """Every system's phases, ratios against the floor, and the soak."""
    work = tmp / "write-path"
    work.mkdir(parents=True, exist_ok=True)
    texts = [t.text for t in load_realtalk().turns]
    embedder = env["MEMORYD_EMBEDDER"]
    out: dict[str, Any] = {
        "cores": os.cpu_count(),
        "previous_commit": PREVIOUS_COMMIT,
        "embedder": embedder,
        "previous_embedder": previous_embedder(embedder),
    }
    with floor_server(work) as (address, pid):
        out["floor"] = system_phases(loadgen, address, work, "floor", texts, cfg, long_run=False,
                                     pid=pid)  # fmt: skip
    with previous_release(work) as previous_path:
        if previous_path is None:
            out["previous"] = {"skipped": f"git could not check out {PREVIOUS_COMMIT}"}
        else:
            prev_env = {
                **env,
                "PYTHONPATH": previous_path,
                "MEMORYD_EMBEDDER": out["previous_embedder"],
            }
            previous = Daemon(
                work / "previous" / "data", embedder=out["previous_embedder"], env=prev_env
            )
            try:
                previous.start()
            except RuntimeError as exc:
                # Its server code on today's generated protos: it may not know a
                # method added since, and refuse to start.
                out["previous"] = {"skipped": f"did not start: {str(exc)[-300:]}"}
            else:
                with previous as d:
                    out["previous"] = system_phases(loadgen, d.address, work, "previous", texts,
                                                    cfg, long_run=False, pid=d.pid)  # fmt: skip
                    out["previous"]["first"] = first_writes(d.address, "previous", texts)
    with Daemon(work / "memoryd" / "data", embedder=embedder, env=env) as d:
        out["memoryd"] = system_phases(
            loadgen, d.address, work, "memoryd", texts, cfg, long_run=True, pid=d.pid
        )
        out["memoryd"]["first"] = first_writes(d.address, "memoryd", texts)
        log(f"writes/memoryd: first write {out['memoryd']['first']}")
        if soak_minutes > 0:
            capacity = min(
                (out["memoryd"]["set8"].get("SetMemory") or {}).get("rps") or 0,
                (out["memoryd"]["rem8"].get("Remember") or {}).get("rps") or 0,
            )
            rate = round(max(1.0, capacity / 2), 1)
            log(f"writes: soak {soak_minutes} min at {rate}/s")
            result = soak(loadgen, d, work, texts, soak_minutes, rate)
            result["plot"] = plot_soak(result, results / f"soak-{stamp}.png")
            out["soak"] = result
        out["memoryd"]["rss_mb_end"] = d.rss_mb()
    out["ratios"] = ratios(out)
    return out


def _stat(out: dict[str, Any], system: str, phase: str, method: str, key: str) -> float | None:
    value = (((out.get(system) or {}).get(phase) or {}).get(method) or {}).get(key)
    return float(value) if isinstance(value, int | float) else None


def ratios(out: dict[str, Any]) -> dict[str, float | None]:
    """memoryd against the floor and the previous release, per phase."""
    found: dict[str, float | None] = {}
    for phase, method in (("set1", "SetMemory"), ("set8", "SetMemory"), ("rem8", "Remember")):
        for other in ("floor", "previous"):
            ours = _stat(out, "memoryd", phase, method, "rps")
            theirs = _stat(out, other, phase, method, "rps")
            found[f"{phase}_rps_over_{other}"] = (
                None if not ours or not theirs else round(ours / theirs, 2)
            )
            ours = _stat(out, "memoryd", phase, method, "p50")
            theirs = _stat(out, other, phase, method, "p50")
            found[f"{phase}_p50_over_{other}"] = (
                None if not ours or not theirs else round(ours / theirs, 2)
            )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--write-seconds", type=float, default=300.0)
    parser.add_argument("--phase-seconds", type=float, default=20.0)
    parser.add_argument("--soak-minutes", type=float, default=0.0)
    parser.add_argument(
        "--embedder",
        default="e5",
        help="the daemons' embedder: e5 (the daemon's default, as `make bench` runs it; "
        "'local' is MiniLM), or hashing, which takes the model out of the write path",
    )
    args = parser.parse_args()
    results = REPO / "bench" / "results"
    results.mkdir(parents=True, exist_ok=True)
    stamp = time.strftime("%Y-%m-%d") + ("" if args.embedder == "e5" else f"-{args.embedder}")
    cfg = {"write_s": args.phase_seconds, "write_long_s": args.write_seconds}
    env = {
        "MEMORYD_STORAGE__HOT_CACHE__MEMORY_BUDGET_MB": "1024",
        "MEMORYD_EMBEDDER": args.embedder,
    }
    loadgen = REPO / "bench" / ".bin" / "loadgen"
    with tempfile.TemporaryDirectory(prefix="memoryd-writes-") as tmp:
        out = {"machine": machine(), "embedder": args.embedder, "write_path": run(
            Path(tmp), cfg, env, loadgen, results, stamp, args.soak_minutes
        )}  # fmt: skip
    (results / f"writes-{stamp}.json").write_text(json.dumps(out, indent=2, default=str))
    rows: list[tuple[str, str, str, bool | None]] = []
    write_report.targets(out["write_path"], {}, lambda *row: rows.append(row))
    lines = [f"# memoryd write path — {stamp}", "",
             f"Machine: {out['machine']['cpu']}, {out['machine']['cores']} cores; load average "
             f"at start {out['machine']['load_average_1m_at_start']}; embedder {args.embedder}.", "",
             "| target | goal | measured | met |", "|---|---|---|---|"]  # fmt: skip
    for name, goal, measured, ok in rows:
        lines.append(
            f"| {name} | {goal} | {measured} | {'—' if ok is None else ('yes' if ok else 'no')} |"
        )
    lines += write_report.lines(out["write_path"])
    (results / f"report-writes-{stamp}.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))


if __name__ == "__main__":
    main()
