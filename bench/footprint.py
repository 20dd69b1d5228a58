"""Footprint and tracing overhead sections of `make bench` (bench/run.py).

footprint  per embedder (hashing: without the model; local: with it): time and CPU
           from exec to SERVING, idle RSS, RSS after the first calls, and an import
           profile of one more start (-X importtime: total and the heaviest packages)
tracing    Recall and Remember (client vectors) against two daemons on the same data,
           tracing off and on (exporting over OTLP/gRPC to a receiver in this process),
           interleaved call by call: p50/p99, the on/off ratio of the p50s, and the
           daemons' CPU per call
"""

from __future__ import annotations

import random
import re
import sys
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
from common import (
    REPO,
    Daemon,
    VectorSource,
    channel,
    ingest,
    log,
    pct,
    recall_request,
    sentence,
    timed,
)

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

sys.path.insert(0, str(REPO))  # tests/otlp_receiver.py: the receiver the tests use
from tests.otlp_receiver import OtlpReceiver

_IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \|( *)(\S+)")
#: Packages listed in the import profile, heaviest first.
TOP_PACKAGES = 8


def import_profile(log_text: str) -> dict[str, Any]:
    """Total import time of a start and the packages that took most of it (self time
    summed per top-level package; -X importtime's own overhead inflates both)."""
    per_package: Counter[str] = Counter()
    for line in log_text.splitlines():
        m = _IMPORT_LINE.match(line)
        if m:
            per_package[m[4].split(".")[0]] += int(m[1])
    total = sum(per_package.values())
    return {
        "total_s": round(total / 1e6, 2),
        "top": {
            name: {"s": round(us / 1e6, 2), "share": round(us / total, 3)}
            for name, us in per_package.most_common(TOP_PACKAGES)
        },
    }


def _first_calls(d: Daemon) -> None:
    """A Remember and a Recall (text: the model, if any, runs once each)."""
    with channel(d.address) as ch:
        stub = mgrpc.MemoryServiceStub(ch)
        stub.Remember(mpb.RememberRequest(agent_id="fp", content="The user likes dark blue"))
        stub.Recall(recall_request("fp", text="which colours does the user like?"))


#: For a first, unmeasured start that writes the bytecode of what the daemon imports, as
#: `make run` does (under PYTHONDONTWRITEBYTECODE every start would compile it again).
WRITE_BYTECODE = {"PYTHONDONTWRITEBYTECODE": ""}


def footprint(tmp: Path, cfg: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    models = (("without_model", "hashing"), ("with_model", "e5"), ("with_minilm", "minilm"))
    for label, embedder in models:
        with Daemon(tmp / f"fp-{label}-first" / "data", embedder=embedder, env=WRITE_BYTECODE):
            pass
        starts, cpu, rss, used = [], [], [], []
        for i in range(cfg["cold_starts"]):
            with Daemon(tmp / f"fp-{label}-{i}" / "data", embedder=embedder) as d:
                starts.append(d.cold_start_s)
                cpu.append(d.cpu_s())
                time.sleep(1.0)  # idle: let start-up garbage settle
                rss.append(d.rss_mb())
                _first_calls(d)
                used.append(d.rss_mb())
        profiled = Daemon(
            tmp / f"fp-{label}-imports" / "data",
            embedder=embedder,
            env={"PYTHONPROFILEIMPORTTIME": "1"},
        )
        with profiled:
            imports = import_profile(profiled.log_path.read_text(errors="replace"))
        out[label] = {
            "cold_start_s": round(float(np.median(starts)), 2),
            "start_cpu_s": round(float(np.median(cpu)), 2),
            "idle_rss_mb": float(np.median(rss)),
            "rss_after_first_calls_mb": float(np.median(used)),
            "imports": imports,
        }
        log(f"footprint {label}: {out[label]}")
    return out


def _ops(
    stub: mgrpc.MemoryServiceStub,
    agent: str,
    queries: np.ndarray[Any, Any],
    fresh: list[list[float]],
) -> dict[str, Callable[[], Any]]:
    recall_at = iter(range(10**9))
    remember_at = iter(range(10**9))

    def recall() -> None:
        stub.Recall(recall_request(agent, queries[next(recall_at) % len(queries)]))

    def remember() -> None:
        i = next(remember_at)
        vector = fresh[i % len(fresh)]
        stub.Remember(mpb.RememberRequest(agent_id=agent, content=f"traced {i}", embedding=vector))

    return {"recall_vector": recall, "remember_vector": remember}


def tracing_overhead(tmp: Path, cfg: dict[str, Any], source: VectorSource) -> dict[str, Any]:
    """Same data, same calls, tracing off and on, interleaved call by call (the order
    flips every call): the box is shared and its speed drifts within seconds, so both
    daemons are measured under the same conditions. CPU is read per round for both."""
    n, agent = cfg["trace_memories"], "traced"
    vectors = source.take(n)
    texts = [sentence(random.Random(i), i) for i in range(n)]
    queries = source.take(200)
    modes = ("off", "on")
    samples: dict[str, dict[str, list[float]]] = {mode: {} for mode in modes}
    cpu_ratios: dict[str, list[float]] = {}
    cpu_s: dict[str, dict[str, float]] = {mode: {} for mode in modes}
    with OtlpReceiver() as receiver:
        env_on = {
            "MEMORYD_TRACING__ENABLED": "true",
            "OTEL_EXPORTER_OTLP_ENDPOINT": receiver.endpoint,
        }
        daemons = {
            "off": Daemon(tmp / "trace-off" / "data").start(),
            "on": Daemon(tmp / "trace-on" / "data", env=env_on).start(),
        }
        try:
            stubs = {}
            for mode, d in daemons.items():
                stubs[mode] = mgrpc.MemoryServiceStub(channel(d.address))
                ingest(stubs[mode], agent, texts, vectors)
                d.settle()
            fresh = source.take(cfg["trace_calls"] * cfg["trace_rounds"] + 50).tolist()
            ops = {mode: _ops(stubs[mode], agent, queries, fresh) for mode in modes}
            for mode in modes:
                for op in ops[mode].values():
                    timed(op, 20)  # warm up: channels, caches, the exporter's connection
            for _ in range(cfg["trace_rounds"]):
                for name in ops["off"]:
                    before = {mode: daemons[mode].cpu_s() for mode in modes}
                    for i in range(cfg["trace_calls"]):
                        for mode in modes if i % 2 == 0 else modes[::-1]:
                            t0 = time.perf_counter()
                            ops[mode][name]()
                            samples[mode].setdefault(name, []).append(time.perf_counter() - t0)
                    used = {mode: daemons[mode].cpu_s() - before[mode] for mode in modes}
                    for mode in modes:
                        cpu_s[mode][name] = cpu_s[mode].get(name, 0.0) + used[mode]
                    cpu_ratios.setdefault(name, []).append(used["on"] / max(used["off"], 1e-9))
            spans = len(receiver.spans())
        finally:
            for d in daemons.values():
                d.stop()
    out: dict[str, Any] = {"rounds": cfg["trace_rounds"], "spans_received": spans}
    calls = cfg["trace_rounds"] * cfg["trace_calls"]
    for name in samples["off"]:
        off, on = pct(samples["off"][name]), pct(samples["on"][name])
        cpu_us = {mode: round(cpu_s[mode][name] / calls * 1e6, 1) for mode in modes}
        out[name] = {
            "off": off,
            "on": on,
            "p50_ratio": round(on["p50"] / off["p50"], 3),
            # The daemon's CPU per call (every thread, the exporter's too): what tracing
            # adds, as a share of the call's p50 with tracing off, and per round.
            "cpu_us_per_call": cpu_us,
            "cpu_added_share_of_p50": round((cpu_us["on"] - cpu_us["off"]) / (off["p50"] * 1e3), 3),
            "round_cpu_ratios": [round(x, 2) for x in cpu_ratios[name]],
        }
    log(f"tracing: {out}")
    return out
