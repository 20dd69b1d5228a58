"""`make bench`'s mixed section (issue 20): reads beside writes, replay, shutdown.

1. One daemon (LanceDB, the local model, default settings) holds 8 agents' REALTALK
   turns. The same 32 clients (bench/loadgen's mixed mode: Go, closed loop, each
   bound to one agent) run three phases of equal length: reads only (hybrid Recall
   with a text query), writes only (Remember with text, RememberBatch of 20 texts,
   SetMemory, in the mixed phase's proportions) and mixed (20/5/15/60 % Remember /
   RememberBatch / SetMemory / Recall). Per method: RPS, p50/p95/p99, errors.
   Targets: mixed Recall p99 <= 3x its read-only p99, mixed SetMemory p50 <= 3x its
   write-only p50, no errors.
2. Replay: a daemon acknowledges Remembers (client vectors) with the background apply
   held off, is SIGKILLed, and its log is topped up offline to 10,000 pending entries
   (2,000 with --quick; the same entry format); the restart's replay rate (from the
   daemon's own "write-ahead log replayed" line) and time from exec to SERVING, and
   the same start with nothing to replay.
3. Shutdown: SIGTERM under the mixed load while a 1,000-item RememberBatch (texts the
   daemon embeds) is in flight; seconds from the signal to the process's exit,
   against the grace period.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

import grpc
import numpy as np
from common import REPO, Daemon, VectorSource, channel, log
from quality_data import load_realtalk

from memoryd.domain.models import Memory, Partition, utcnow
from memoryd.durability.ops import Op, encode
from memoryd.durability.wal import WriteAheadLog
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

AGENTS = [f"mixed-{i}" for i in range(8)]
CLIENTS = 32
MIX = {"Remember": 20, "RememberBatch": 5, "SetMemory": 15, "Recall": 60}
PHASES = {
    "read_only": {"Recall": 1},
    "write_only": {k: v for k, v in MIX.items() if k != "Recall"},
    "mixed": MIX,
}
BATCH = 20
GRACE_S = 10.0
#: A daemon counts as settled between phases below this share of a core.
SETTLE_BUSY = 0.1


def _phase(
    loadgen: Path, address: str, work: Path, name: str, texts: list[str], queries: list[str],
    seconds: float,
) -> dict[str, Any]:  # fmt: skip
    spec = {
        "clients": CLIENTS, "seconds": seconds, "agents": AGENTS, "mix": PHASES[name],
        "texts": texts, "queries": queries, "batch": BATCH, "keys": 50, "seed": 7,
    }  # fmt: skip
    path = work / f"mixed-{name}.json"
    path.write_text(json.dumps(spec))
    done = subprocess.run(
        [str(loadgen), "mixed", address, str(path)],
        capture_output=True, text=True, cwd=REPO, timeout=seconds + 600,
    )  # fmt: skip
    if done.returncode != 0:
        return {"error": done.stderr[-800:]}
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def load_phases(
    tmp: Path, cfg: dict[str, Any], env: dict[str, str], loadgen: Path
) -> dict[str, Any]:
    corpus = load_realtalk()
    turns = [t.text for t in corpus.turns]
    queries = [q.text for q in corpus.questions][:500]
    per_agent = cfg["mixed_memories"]
    out: dict[str, Any] = {"clients": CLIENTS, "agents": len(AGENTS), "mix": MIX}
    with Daemon(tmp / "mixed", env=env) as d, channel(d.address) as ch:
        stub = mgrpc.MemoryServiceStub(ch)
        started = time.perf_counter()
        for a, agent in enumerate(AGENTS):
            mine = turns[a * per_agent : (a + 1) * per_agent]
            for i in range(0, len(mine), 100):
                items = [mpb.RememberRequest(content=t) for t in mine[i : i + 100]]
                stub.RememberBatch(
                    mpb.RememberBatchRequest(agent_id=agent, items=items), timeout=600
                )
        out["preload"] = {
            "memories": per_agent * len(AGENTS),
            "seconds": round(time.perf_counter() - started, 1),
            "settle_s": d.settle(busy=SETTLE_BUSY),
        }
        log(f"mixed: preloaded {out['preload']}")
        writes = turns[len(AGENTS) * per_agent :] or turns
        for name in PHASES:
            result = _phase(loadgen, d.address, tmp, name, writes, queries, cfg["mixed_s"])
            result["settle_s"] = d.settle(busy=SETTLE_BUSY)
            out[name] = result
            log(f"mixed: {name}: {result}")
    out["ratios"] = ratios(out)
    return out


def ratios(out: dict[str, Any]) -> dict[str, float | None]:
    def get(phase: str, method: str, key: str) -> float | None:
        value = ((out.get(phase) or {}).get("methods") or {}).get(method, {}).get(key)
        return float(value) if isinstance(value, int | float) else None

    def ratio(a: float | None, b: float | None) -> float | None:
        return None if a is None or not b else round(a / b, 2)

    return {
        "recall_p99_mixed_over_read_only": ratio(
            get("mixed", "Recall", "p99"), get("read_only", "Recall", "p99")
        ),
        "recall_p50_mixed_over_read_only": ratio(
            get("mixed", "Recall", "p50"), get("read_only", "Recall", "p50")
        ),
        "setmemory_p50_mixed_over_write_only": ratio(
            get("mixed", "SetMemory", "p50"), get("write_only", "SetMemory", "p50")
        ),
    }


# -- replay -------------------------------------------------------------------------


def _remember_until(address: str, vectors: np.ndarray, seconds: float) -> int:
    """Remember with client vectors from 32 threads for ``seconds``; how many answered."""
    count = 0
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def worker(w: int) -> None:
        nonlocal count
        with channel(address) as ch:
            stub = mgrpc.MemoryServiceStub(ch)
            n = w
            while time.monotonic() < deadline:
                stub.Remember(
                    mpb.RememberRequest(
                        agent_id=AGENTS[w % len(AGENTS)],
                        content=f"replayed fact {n}",
                        embedding=vectors[n % len(vectors)].tolist(),
                    ),
                    timeout=60,
                )
                with lock:
                    count += 1
                n += CLIENTS

    threads = [threading.Thread(target=worker, args=(w,)) for w in range(CLIENTS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return count


def _top_up(wal_dir: Path, have: int, want: int, vectors: np.ndarray) -> int:
    """Append Remember entries (one memory each, as the daemon logs them) up to
    ``want`` pending; returns how many were added."""
    missing = max(0, want - have)
    payloads = []
    now = utcnow()
    for i in range(missing):
        agent = AGENTS[i % len(AGENTS)]
        memory = Memory(
            id=f"topup-{i:06d}", tenant_id="default", agent_id=agent,
            content=f"topped-up fact {i}", created_at=now, updated_at=now,
            vector=vectors[i % len(vectors)], embedding_model="all-MiniLM-L6-v2",
            embedding_dimension=vectors.shape[1],
        )  # fmt: skip
        payloads.append(encode([Op("upsert", Partition("default", agent), memories=(memory,))]))
    if payloads:
        WriteAheadLog(wal_dir).append_offline(payloads)
    return missing


def replay(
    tmp: Path, cfg: dict[str, Any], env: dict[str, str], source: VectorSource
) -> dict[str, Any]:
    want = cfg["replay_entries"]
    vectors = source.take(2_000)
    held = {
        **env,
        # Acknowledged at the fsync, applied only after 10 s: the kill comes first.
        "MEMORYD_DURABILITY__APPLY_BEHIND": str(want * 2),
        "MEMORYD_DURABILITY__APPLY_DELAY_MS": "10000",
    }
    d = Daemon(tmp / "replay", env=held)
    d.start()
    acknowledged = _remember_until(d.address, vectors, seconds=cfg["replay_write_s"])
    assert d.process is not None
    d.process.kill()
    d.process.wait()
    d.process = None
    pending = int(_wal_check(d.data_dir).get("entries_to_replay", 0))
    added = _top_up(d.data_dir / "wal", pending, want, vectors)
    d.env = env
    d.start(timeout_s=600)
    events = d.log_events("write-ahead log replayed")
    d.stop()
    with_log_s = d.cold_start_s
    d.start(timeout_s=600)  # the same start with nothing to replay, for comparison
    d.stop()
    replayed = events[-1] if events else {}
    seconds = float(replayed.get("seconds") or 0)
    entries = int(replayed.get("entries") or 0)
    return {
        "acknowledged_before_kill": acknowledged,
        "pending_after_kill": pending,
        "topped_up": added,
        "replayed_entries": entries,
        "replay_s": round(seconds, 2),
        "entries_per_s": round(entries / seconds) if seconds else None,
        "start_to_serving_s": round(with_log_s, 2),
        "start_without_log_s": round(d.cold_start_s, 2),
    }


def _wal_check(data_dir: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "memoryd", "wal", "check", "--json", "--data-dir", str(data_dir)],
        capture_output=True, text=True, cwd=REPO, timeout=300,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(done.stdout) if done.stdout else {}
    return result


# -- shutdown -------------------------------------------------------------------------


def shutdown(tmp: Path, cfg: dict[str, Any], env: dict[str, str], loadgen: Path) -> dict[str, Any]:
    """SIGTERM under the mixed load, 2 s after a 1,000-item RememberBatch of texts
    (embedded by the daemon) was sent; seconds from the signal to the process's exit."""
    corpus = load_realtalk()
    texts = [t.text for t in corpus.turns]
    queries = [q.text for q in corpus.questions][:300]
    d = Daemon(tmp / "shutdown", env={**env, "MEMORYD_SHUTDOWN_GRACE_S": str(GRACE_S)})
    d.start()
    with channel(d.address) as ch:
        stub = mgrpc.MemoryServiceStub(ch)
        for agent in AGENTS:
            items = [mpb.RememberRequest(content=t) for t in texts[: cfg["mixed_memories"]]]
            stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent, items=items), timeout=600)
    spec = {
        "clients": CLIENTS, "seconds": 120, "agents": AGENTS, "mix": MIX,
        "texts": texts[2000:4000], "queries": queries, "batch": BATCH, "keys": 50, "seed": 3,
    }  # fmt: skip
    (tmp / "shutdown-load.json").write_text(json.dumps(spec))
    load = subprocess.Popen(
        [str(loadgen), "mixed", d.address, str(tmp / "shutdown-load.json")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    outcome: dict[str, Any] = {}

    def batch() -> None:
        with channel(d.address) as ch:
            stub = mgrpc.MemoryServiceStub(ch)
            items = [mpb.RememberRequest(content=t) for t in texts[5000:6000]]
            t0 = time.perf_counter()
            try:
                stub.RememberBatch(
                    mpb.RememberBatchRequest(agent_id="shutdown", items=items), timeout=600
                )
                outcome["batch"] = "OK"
            except grpc.RpcError as exc:
                outcome["batch"] = exc.code().name  # type: ignore[attr-defined]
            outcome["batch_s"] = round(time.perf_counter() - t0, 2)

    time.sleep(5.0)  # the load is on
    caller = threading.Thread(target=batch)
    caller.start()
    time.sleep(2.0)  # the batch is being embedded
    assert d.process is not None
    signalled = time.perf_counter()
    d.process.send_signal(signal.SIGTERM)
    try:
        code = d.process.wait(timeout=300)
    except subprocess.TimeoutExpired:
        d.process.kill()
        code = d.process.wait()
    exit_s = time.perf_counter() - signalled
    d.process = None
    load.kill()
    load.wait()
    caller.join()
    return {
        "grace_s": GRACE_S,
        "sigterm_to_exit_s": round(exit_s, 2),
        "exit_code": code,
        "under_load": f"{CLIENTS} clients, the mixed phase's mix",
        **outcome,
    }


def mixed(
    tmp: Path, cfg: dict[str, Any], env: dict[str, str], loadgen: Path, source: VectorSource
) -> dict[str, Any]:
    if not loadgen.is_file():
        return {"error": f"{loadgen} not built (make bench builds it)"}
    out = load_phases(tmp, cfg, env, loadgen)
    out["replay"] = replay(tmp, cfg, env, source)
    log(f"mixed: replay {out['replay']}")
    out["shutdown"] = shutdown(tmp, cfg, env, loadgen)
    log(f"mixed: shutdown {out['shutdown']}")
    return out


def main() -> None:  # pragma: no cover - a manual entry point
    with tempfile.TemporaryDirectory(prefix="memoryd-mixed-") as name:
        cfg = {
            "mixed_memories": 300, "mixed_s": 10.0, "replay_entries": 10_000,
            "replay_write_s": 7.0,
        }  # fmt: skip
        loadgen = Path(__file__).resolve().parent / ".bin" / "loadgen"
        print(json.dumps(mixed(Path(name), cfg, {}, loadgen, VectorSource.from_model(400))))


if __name__ == "__main__":
    main()
