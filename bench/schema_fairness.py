"""`make bench` section `schemas`: one tenant's calls while two other tenants load
expensive working-memory JSON Schemas (issue 30, item 6).

One daemon (API keys for three tenants, the hashing embedder: the model is not what is
measured). The victim tenant, one client, calls in turn a schema-checked
SetWorkingMemory (its scope's schema is kept; every write's content is validated
against it) and Remember: first alone (unloaded), then while two attacker tenants,
``ATTACKER_CLIENTS`` clients each, send SetWorkingMemory with a schema whose every
evaluation takes a whole check's CPU budget (a DAG of ``anyOf`` references 40 deep
over content that matches none: 2^40 branches) as fast as they are answered. The
attackers' requests are serialised once: their client-side cost is small.

Reported: the victim's p50 / p99 per method unloaded and loaded, the loaded/unloaded
ratios (target: p50 ≤ 2x), and how the attackers were answered. The same load runs
against a daemon whose per-tenant budget is effectively off (a burst of an hour), to
show what the budget buys.
"""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import grpc
from common import Daemon, channel, log, pct
from google.protobuf import json_format, struct_pb2

from memoryd.security.keys import hash_key
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

VICTIM = ("victim-" + "v" * 24, "acme")
ATTACKERS = [("attacker1-" + "a" * 22, "evil1"), ("attacker2-" + "b" * 22, "evil2")]
ATTACKER_CLIENTS = 3
#: How long the attackers load the daemon before the victim's calls are timed.
WARMUP_S = 2.0
#: Target: the victim's p50 under the load within this many times its unloaded p50.
TARGET_RATIO = 2.0
SET_WORKING = "/memoryd.v1.MemoryService/SetWorkingMemory"
VICTIM_SCHEMA = {
    "type": "object",
    "properties": {
        "goal": {"type": "string", "maxLength": 200},
        "step": {"type": "integer", "minimum": 0},
        "todo": {"type": "array", "items": {"type": "string"}},
    },
    "required": ["goal"],
}


def attacker_schema(depth: int = 40) -> dict[str, Any]:
    defs: dict[str, Any] = {
        f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}, {"$ref": f"#/$defs/a{i + 1}"}]}
        for i in range(depth)
    }
    defs[f"a{depth}"] = {"type": "string"}
    return {"$defs": defs, "$ref": "#/$defs/a0"}


def _struct(value: dict[str, Any]) -> struct_pb2.Struct:
    s = struct_pb2.Struct()
    json_format.ParseDict(value, s)
    return s


def _keys_env(per_tenant_unbounded: bool) -> dict[str, str]:
    keys = [
        {"sha256": hash_key(raw), "name": tenant, "tenant_id": tenant, "agents": "*",
         "clearance": "internal", "roles": ["read", "write"]}
        for raw, tenant in [VICTIM, *ATTACKERS]
    ]  # fmt: skip
    env = {
        "MEMORYD_AUTH__MODE": "api_key",
        "MEMORYD_AUTH__KEYS": json.dumps(keys),
        "MEMORYD_MAINTENANCE__ENABLED": "false",
    }
    if per_tenant_unbounded:
        env["MEMORYD_WORKING_MEMORY__SCHEMA_CPU_MS_PER_S"] = "1000"
        env["MEMORYD_WORKING_MEMORY__SCHEMA_CPU_BURST_MS"] = "3600000"
    return env


def _metadata(raw: str) -> tuple[tuple[str, str], ...]:
    return (("authorization", f"Bearer {raw}"),)


def _victim_rounds(stub: mgrpc.MemoryServiceStub, rounds: int) -> dict[str, list[float]]:
    md = _metadata(VICTIM[0])
    scope = pb.WorkingMemoryScope(thread_id="plan")
    samples: dict[str, list[float]] = {"set_working_memory": [], "remember": []}
    for i in range(rounds):
        content = _struct({"goal": "ship the release", "step": i, "todo": ["tests", "notes"]})
        started = time.perf_counter()
        stub.SetWorkingMemory(
            mpb.SetWorkingMemoryRequest(agent_id="a1", scope=scope, content=content),
            metadata=md,
            timeout=60,
        )
        samples["set_working_memory"].append(time.perf_counter() - started)
        started = time.perf_counter()
        stub.Remember(
            mpb.RememberRequest(agent_id="a1", content=f"release note {i}: tests pass"),
            metadata=md,
            timeout=60,
        )
        samples["remember"].append(time.perf_counter() - started)
    return samples


def _attack(address: str, raw: str, stop: threading.Event, answers: Counter[str]) -> None:
    request = mpb.SetWorkingMemoryRequest(
        agent_id="a1",
        scope=pb.WorkingMemoryScope(thread_id="t"),
        content=_struct({"x": 1}),
        json_schema=_struct(attacker_schema()),
    ).SerializeToString()
    with channel(address) as ch:
        call = ch.unary_unary(SET_WORKING)  # bytes in, bytes out: no client-side encoding
        while not stop.is_set():
            try:
                call(request, metadata=_metadata(raw), timeout=60)
                answers["OK"] += 1
            except grpc.RpcError as error:
                answers[error.code().name] += 1


def _phase(tmp: Path, name: str, rounds: int, unbounded: bool) -> dict[str, Any]:
    daemon = Daemon(tmp / f"schemas-{name}", embedder="hashing", env=_keys_env(unbounded))
    daemon.start()
    try:
        with channel(daemon.address) as ch:
            stub = mgrpc.MemoryServiceStub(ch)
            stub.SetWorkingMemory(  # the scope's schema, kept for every later write
                mpb.SetWorkingMemoryRequest(
                    agent_id="a1",
                    scope=pb.WorkingMemoryScope(thread_id="plan"),
                    content=_struct({"goal": "start"}),
                    json_schema=_struct(VICTIM_SCHEMA),
                ),
                metadata=_metadata(VICTIM[0]),
                timeout=60,
            )
            _victim_rounds(stub, 10)  # warm-up
            unloaded = _victim_rounds(stub, rounds)
            stop, answers = threading.Event(), Counter[str]()
            clients = len(ATTACKERS) * ATTACKER_CLIENTS
            with ThreadPoolExecutor(clients) as pool:
                for i in range(clients):
                    raw = ATTACKERS[i % len(ATTACKERS)][0]
                    pool.submit(_attack, daemon.address, raw, stop, answers)
                time.sleep(WARMUP_S)
                started, cpu = time.perf_counter(), daemon.cpu_s()
                loaded = _victim_rounds(stub, rounds)
                elapsed, cpu = time.perf_counter() - started, daemon.cpu_s() - cpu
                stop.set()
    finally:
        daemon.stop()
    out: dict[str, Any] = {"attacker_answers": dict(answers)}
    for method in unloaded:
        before, after = pct(unloaded[method]), pct(loaded[method])
        out[method] = {
            "unloaded": before,
            "loaded": after,
            "ratio_p50": round(after["p50"] / before["p50"], 2),
            "ratio_p99": round(after["p99"] / before["p99"], 2),
        }
    out["daemon_cpu_while_loaded"] = round(cpu / elapsed, 2)
    return out


def schema_fairness(tmp: Path, rounds: int) -> dict[str, Any]:
    """The section's result: with the per-tenant budget (the default) and without."""
    result: dict[str, Any] = {"rounds": rounds, "attacker_clients": ATTACKER_CLIENTS * 2}
    for name, unbounded in (("budgeted", False), ("unbudgeted", True)):
        log(f"schemas: {name}, {rounds} victim rounds unloaded and loaded")
        result[name] = _phase(tmp, name, rounds, unbounded)
        log(f"schemas: {name}: {result[name]}")
    return result
