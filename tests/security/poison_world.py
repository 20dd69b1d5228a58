"""The poison matrix's world: one daemon's gRPC channel and MCP URL, the key every call
uses, the seeded agent, and a valid base request per operation that the matrix poisons
(tests/security/test_json_poison.py)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import grpc
from google.protobuf import duration_pb2, struct_pb2, timestamp_pb2
from google.protobuf.message import Message

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from tests.conftest import Daemon
from tests.security.support import KeySpec, Outcome, all_rpcs, invoke

ADMIN = KeySpec(
    "poison-" + "p" * 24, "poisoner", "poison", "*", "restricted", ("read", "write", "admin")
)
USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)
SEED = "seed"
#: The seq of the seeded session's offloaded tool result (append()).
ATTACHMENT_SEQ = 3
HOUR = duration_pb2.Duration(seconds=3600)
RPCS = {rpc.label: rpc for rpc in all_rpcs()}
_fresh = itertools.count()


@dataclass
class World:
    daemon: Daemon
    mcp_url: str
    channel: grpc.Channel

    def call(self, label: str, request: Message | Sequence[Message]) -> Outcome:
        return invoke(self.channel, RPCS[label], request, ADMIN.metadata)

    def ok(self, label: str, request: Message | Sequence[Message]) -> list[Message]:
        out = self.call(label, request)
        assert out.code == grpc.StatusCode.OK, (label, out.code, out.message)
        return out.responses

    def export(self, agent: str) -> list[bytes]:
        """The agent's records (header and progress left out); never an error."""
        responses = self.ok("LifecycleService.Export", lpb.ExportRequest(agent_id=agent))
        return [
            r.record.SerializeToString(deterministic=True)
            for r in responses
            if r.HasField("record") and not r.record.HasField("header")
        ]


def fresh() -> str:
    return f"p{next(_fresh)}"


def now() -> timestamp_pb2.Timestamp:
    stamp = timestamp_pb2.Timestamp()
    stamp.GetCurrentTime()
    return stamp


def seed(w: World, agent: str) -> None:
    """One record of every kind, for reads and as the base records of an import."""
    w.ok("MemoryService.Remember", remember(agent))
    w.ok("MemoryService.SetMemory", set_memory(agent))
    w.ok("MemoryService.SetWorkingMemory", set_working(agent))
    w.ok("MemoryService.SetProfile", mpb.SetProfileRequest(agent_id=agent, content="# me"))
    w.ok("MemoryService.AppendMessages", append(agent))
    w.ok("SnapshotService.SaveState", save_state(agent))


# ---------------------------------------------------------------------- base requests


def remember(agent: str) -> mpb.RememberRequest:
    return mpb.RememberRequest(
        agent_id=agent,
        content="the poison base memory",
        importance=0.5,
        confidence=0.5,
        metadata_json='{"v": 1}',
        source=pb.Provenance(
            kind=pb.PROVENANCE_KIND_TOOL, name="t", locator="t", retrieved_at=now()
        ),
        expires_at=timestamp_pb2.Timestamp(seconds=4_000_000_000),
        created_at=now(),
        occurred_at=now(),
    )


def set_memory(agent: str) -> mpb.SetMemoryRequest:
    return mpb.SetMemoryRequest(
        agent_id=agent, key="/p/k", content_json='{"v": 1}', source=USER, if_version=0
    )


def set_working(agent: str) -> mpb.SetWorkingMemoryRequest:
    request = mpb.SetWorkingMemoryRequest(
        agent_id=agent,
        scope=pb.WorkingMemoryScope(thread_id="t"),
        content_json='{"v": 1}',
        ttl=HOUR,
    )
    request.json_schema.update({"type": "object"})
    return request


def append(agent: str) -> mpb.AppendMessagesRequest:
    call = mpb.ToolCall(id="c1", name="lookup", arguments=struct_pb2.Value(string_value="x"))
    return mpb.AppendMessagesRequest(
        agent_id=agent,
        session_id="s",
        messages=[
            mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content="hello", created_at=now()),
            mpb.SessionMessage(role=mpb.MESSAGE_ROLE_ASSISTANT, content="hm", tool_calls=[call]),
            # Over sessions.offload_bytes (5 KiB): offloaded to attachment ATTACHMENT_SEQ.
            mpb.SessionMessage(
                role=mpb.MESSAGE_ROLE_TOOL, content="row\n" * 2000, tool_call_id="c1"
            ),
        ],
        ttl=HOUR,
        compression=mpb.SessionCompression(
            compress_threshold_messages=20,
            compress_token_ratio=0.5,
            context_budget_tokens=4000,
            keep_recent_messages=2,
        ),
    )


def save_state(agent: str) -> spb.SaveStateRequest:
    return spb.SaveStateRequest(
        agent_id=agent,
        session_id="s",
        components=[spb.StateComponent(name="planner", state_json='{"v": 1}')],
    )


def update_memory(w: World, agent: str) -> mpb.UpdateMemoryRequest:
    memory = w.ok("MemoryService.Remember", remember(agent))[0].memory
    request = mpb.UpdateMemoryRequest(agent_id=agent, if_version=memory.version)
    request.memory.CopyFrom(memory)
    request.memory.metadata_json = '{"v": 2}'
    request.memory.ClearField("metadata")
    request.update_mask.paths.extend(
        ["importance", "confidence", "metadata", "expires_at", "occurred_at", "source"]
    )
    return request


def delete_messages(w: World, agent: str) -> mpb.DeleteMessagesRequest:
    w.ok("MemoryService.AppendMessages", append(agent))
    return mpb.DeleteMessagesRequest(agent_id=agent, session_id="s", seqs=[1])


Base = Callable[[World, str], Message]
#: A valid request per operation with JSON- or number-bearing fields; writes get a
#: fresh agent (to see that a rejection stores nothing), reads the seeded one.
BASES: dict[str, Base] = {
    "MemoryService.Remember": lambda w, a: remember(a),
    "MemoryService.RememberBatch": lambda w, a: mpb.RememberBatchRequest(
        agent_id=a, items=[remember("")]
    ),
    "MemoryService.Recall": lambda w, a: mpb.RecallRequest(
        agent_id=SEED,
        query="poison base",
        limit=5,
        min_score=0.0,
        scoring=mpb.Scoring(
            half_life_hours=24, similarity_weight=1, recency_weight=1, importance_weight=1
        ),
        created_after=timestamp_pb2.Timestamp(seconds=1),
        created_before=now(),
        now=now(),
    ),
    "MemoryService.ListMemories": lambda w, a: mpb.ListMemoriesRequest(
        agent_id=SEED, page_size=10, created_after=timestamp_pb2.Timestamp(seconds=1)
    ),
    "MemoryService.UpdateMemory": update_memory,
    "MemoryService.SetMemory": lambda w, a: set_memory(a),
    "MemoryService.ListKeys": lambda w, a: mpb.ListKeysRequest(
        agent_id=SEED, page_size=10, as_of=pb.AsOf(time=now())
    ),
    "MemoryService.GetKey": lambda w, a: mpb.GetKeyRequest(
        agent_id=SEED, key="/p/k", as_of=pb.AsOf(time=now())
    ),
    "MemoryService.KeyHistory": lambda w, a: mpb.KeyHistoryRequest(
        agent_id=SEED, key="/p/k", page_size=10
    ),
    "MemoryService.SetWorkingMemory": lambda w, a: set_working(a),
    "MemoryService.ListWorkingMemoryScopes": lambda w, a: mpb.ListWorkingMemoryScopesRequest(
        agent_id=SEED, page_size=10
    ),
    "MemoryService.AppendMessages": lambda w, a: append(a),
    "MemoryService.GetSessionWindow": lambda w, a: mpb.GetSessionWindowRequest(
        agent_id=SEED, session_id="s", token_budget=1000
    ),
    "MemoryService.GetSessionAttachment": lambda w, a: mpb.GetSessionAttachmentRequest(
        agent_id=SEED, session_id="s", seq=ATTACHMENT_SEQ, offset=0, max_chars=10
    ),
    "MemoryService.GetSessionMessages": lambda w, a: mpb.GetSessionMessagesRequest(
        agent_id=SEED, session_id="s", from_seq=1, page_size=10
    ),
    "MemoryService.DeleteMessages": delete_messages,
    "SnapshotService.BuildSnapshot": lambda w, a: spb.BuildSnapshotRequest(
        agent_id=SEED,
        trigger="poison",
        token_budget=1000,
        semantic_limit=5,
        recent_limit=5,
        recent_window=HOUR,
    ),
    "SnapshotService.DefaultRead": lambda w, a: spb.DefaultReadRequest(
        agent_id=SEED, token_limit=1000, current_time=now()
    ),
    "SnapshotService.SaveState": lambda w, a: save_state(a),
    "LifecycleService.Archive": lambda w, a: lpb.ArchiveRequest(
        agent_id=a,
        selector=lpb.MemorySelector(
            created_before=now(), created_after=timestamp_pb2.Timestamp(seconds=1)
        ),
    ),
    "LifecycleService.Restore": lambda w, a: lpb.RestoreRequest(
        agent_id=a,
        selector=lpb.MemorySelector(
            created_before=now(), created_after=timestamp_pb2.Timestamp(seconds=1)
        ),
    ),
    "LifecycleService.Prune": lambda w, a: lpb.PruneRequest(
        agent_id=a, created_before=now(), min_access_count=1, dry_run=True
    ),
    "LifecycleService.Compact": lambda w, a: lpb.CompactRequest(
        agent_id=a, merge_group_threshold=50, merge_similarity=0.99
    ),
    "LifecycleService.RunMaintenance": lambda w, a: lpb.RunMaintenanceRequest(
        agent_id=a, max_entries=100, retention_days=30
    ),
    "LifecycleService.Consolidate": lambda w, a: lpb.ConsolidateRequest(
        agent_id=a, dry_run=True, min_age_days=1, min_group_size=3
    ),
    "LifecycleService.Reembed": lambda w, a: lpb.ReembedRequest(agent_id=a, batch_size=10),
}
