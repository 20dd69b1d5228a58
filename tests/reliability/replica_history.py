"""A history check of memoryd replicas over one store: clients hammer a few keys
(SetMemory with and without if_version), one working-memory scope (merges) and one
session (appends) through replicas chosen at random; afterwards the histories the
store holds are checked against what every client was told.
"""

from __future__ import annotations

import random
import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import grpc
from google.protobuf import struct_pb2

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

AGENT = "history"
KEYS = [f"/history/k{i}" for i in range(5)]
SCOPE = pb.WorkingMemoryScope(thread_id="shared-thread", resource_id="r")
SESSION = "shared-session"
SOURCE = pb.Provenance(kind=pb.PROVENANCE_KIND_AGENT, name="history check")
TIMEOUT_S = 60.0
#: Answers a client may get without anything being wrong: a lost if_version race, or
#: a write that lost every attempt to others (nothing written either way).
EXPECTED_REFUSALS = {"FAILED_PRECONDITION", "ABORTED"}


@dataclass(frozen=True)
class KeyWrite:
    client: int
    n: int
    key: str
    value: str
    if_version: int | None
    version: int


@dataclass
class Ledger:
    lock: threading.Lock = field(default_factory=threading.Lock)
    keys: list[KeyWrite] = field(default_factory=list)
    #: Field name -> value of every acknowledged merge (each writes its own field).
    merges: dict[str, str] = field(default_factory=dict)
    #: Contents of every acknowledged appended message.
    appended: list[str] = field(default_factory=list)
    refused: Counter[str] = field(default_factory=Counter)
    unexpected: list[str] = field(default_factory=list)


def _client(
    stubs: Sequence[mgrpc.MemoryServiceStub], ledger: Ledger, client: int, ops: int
) -> None:
    rng = random.Random(client)
    for n in range(ops):
        stub = rng.choice(stubs)
        roll = rng.random()
        what = "set_memory"
        try:
            if roll < 0.6:
                key = rng.choice(KEYS)
                value = f"c{client}-n{n}"
                if_version = None
                if roll < 0.3:  # conditional: on the version just read (maybe elsewhere)
                    what = "set_memory_if"
                    try:
                        got = rng.choice(stubs).GetKey(
                            mpb.GetKeyRequest(agent_id=AGENT, key=key), timeout=TIMEOUT_S
                        )
                        if_version = got.entry.version
                    except grpc.RpcError as exc:
                        if exc.code() != grpc.StatusCode.NOT_FOUND:
                            raise
                        if_version = 0
                request = mpb.SetMemoryRequest(
                    agent_id=AGENT,
                    key=key,
                    content=struct_pb2.Value(string_value=value),
                    source=SOURCE,
                )
                if if_version is not None:
                    request.if_version = if_version
                entry = stub.SetMemory(request, timeout=TIMEOUT_S).entry
                assert entry.content.string_value == value
                with ledger.lock:
                    ledger.keys.append(KeyWrite(client, n, key, value, if_version, entry.version))
            elif roll < 0.8:
                what = "merge"
                name = f"c{client}_n{n}"
                content = struct_pb2.Struct()
                content.update({name: f"v{client}.{n}"})
                stub.SetWorkingMemory(
                    mpb.SetWorkingMemoryRequest(
                        agent_id=AGENT,
                        scope=SCOPE,
                        content=content,
                        mode=mpb.WORKING_MEMORY_MODE_MERGE,
                    ),
                    timeout=TIMEOUT_S,
                )
                with ledger.lock:
                    ledger.merges[name] = f"v{client}.{n}"
            else:
                what = "append"
                texts = [f"message c{client} n{n} part {i}" for i in range(rng.randint(1, 2))]
                stub.AppendMessages(
                    mpb.AppendMessagesRequest(
                        agent_id=AGENT,
                        session_id=SESSION,
                        messages=[
                            mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content=t) for t in texts
                        ],
                    ),
                    timeout=TIMEOUT_S,
                )
                with ledger.lock:
                    ledger.appended.extend(texts)
        except grpc.RpcError as exc:
            code = exc.code().name
            with ledger.lock:
                if code in EXPECTED_REFUSALS:
                    ledger.refused[f"{what} {code}"] += 1
                else:
                    ledger.unexpected.append(f"{what}: {code} {exc.details()}")


def run(stubs: Sequence[mgrpc.MemoryServiceStub], clients: int, ops: int) -> Ledger:
    ledger = Ledger()
    threads = [
        threading.Thread(target=_client, args=(stubs, ledger, c, ops)) for c in range(clients)
    ]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return ledger


@dataclass
class Findings:
    """Every way the stored histories contradict what the clients were told."""

    duplicate_versions: list[int] = field(default_factory=list)
    missing_writes: list[KeyWrite] = field(default_factory=list)
    unordered_histories: list[str] = field(default_factory=list)
    client_order: list[str] = field(default_factory=list)
    broken_preconditions: list[KeyWrite] = field(default_factory=list)
    stale_slots: list[str] = field(default_factory=list)
    lost_merges: list[str] = field(default_factory=list)
    merge_versions: list[str] = field(default_factory=list)
    lost_messages: list[str] = field(default_factory=list)
    repeated_messages: list[str] = field(default_factory=list)
    acknowledged_versions: int = 0

    @property
    def violations(self) -> dict[str, int]:
        return {
            name: len(value)
            for name, value in vars(self).items()
            if isinstance(value, list) and value
        }


def _history(stub: mgrpc.MemoryServiceStub, key: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    token = ""
    while True:
        page = stub.KeyHistory(
            mpb.KeyHistoryRequest(agent_id=AGENT, key=key, page_size=500, page_token=token),
            timeout=TIMEOUT_S,
        )
        out.extend((e.version, e.content.string_value) for e in page.entries)
        token = page.next_page_token
        if not token:
            return out


def check(stub: mgrpc.MemoryServiceStub, ledger: Ledger) -> Findings:
    f = Findings()
    # Keys: every acknowledged write is in its key's history at its version; versions
    # are unique in the partition and increase along each history and along each
    # client's writes; a conditional write replaced exactly the version it named.
    every_version: Counter[int] = Counter()
    histories: dict[str, list[tuple[int, str]]] = {}
    for key in KEYS:
        history = _history(stub, key)
        histories[key] = history
        versions = [v for v, _ in history]
        if versions != sorted(set(versions)):
            f.unordered_histories.append(f"{key}: {versions}")
        every_version.update(versions)
        latest = stub.GetKey(mpb.GetKeyRequest(agent_id=AGENT, key=key), timeout=TIMEOUT_S)
        if history and latest.entry.version != history[-1][0]:
            f.stale_slots.append(f"{key}: slot {latest.entry.version}, history {history[-1][0]}")
    f.duplicate_versions = sorted(v for v, n in every_version.items() if n > 1)
    acked = Counter(w.version for w in ledger.keys)
    f.acknowledged_versions = len(ledger.keys)
    f.duplicate_versions += sorted(v for v, n in acked.items() if n > 1)
    for w in ledger.keys:
        history = histories[w.key]
        if (w.version, w.value) not in history:
            f.missing_writes.append(w)
            continue
        if w.if_version is not None:
            at = history.index((w.version, w.value))
            before = history[at - 1][0] if at > 0 else 0
            if before != w.if_version:
                f.broken_preconditions.append(w)
    for client in {w.client for w in ledger.keys}:
        mine = [w.version for w in sorted(ledger.keys, key=lambda w: w.n) if w.client == client]
        if mine != sorted(mine) or len(set(mine)) != len(mine):
            f.client_order.append(f"client {client}: {mine}")

    # Working memory: every acknowledged merge's field is there, and each merge
    # became exactly one version.
    wm = stub.GetWorkingMemory(
        mpb.GetWorkingMemoryRequest(agent_id=AGENT, scope=SCOPE), timeout=TIMEOUT_S
    ).working_memory
    content = dict(wm.content)
    f.lost_merges = sorted(k for k, v in ledger.merges.items() if content.get(k) != v)
    if wm.version != len(content):
        f.merge_versions.append(f"version {wm.version} after {len(content)} merged fields")

    # Session: every acknowledged message is stored once, in seq order.
    stored: list[tuple[int, str]] = []
    token = ""
    while True:
        page = stub.GetSessionMessages(
            mpb.GetSessionMessagesRequest(
                agent_id=AGENT, session_id=SESSION, page_size=500, page_token=token
            ),
            timeout=TIMEOUT_S,
        )
        stored.extend((m.seq, m.content) for m in page.messages)
        token = page.next_page_token
        if not token:
            break
    seqs = [s for s, _ in stored]
    if seqs != list(range(1, len(seqs) + 1)):
        f.repeated_messages.append(f"seqs {seqs[:10]}... not 1..{len(seqs)}")
    contents = Counter(c for _, c in stored)
    f.lost_messages = sorted(set(ledger.appended) - set(contents))
    f.repeated_messages += sorted(c for c, n in contents.items() if n > 1)
    return f
