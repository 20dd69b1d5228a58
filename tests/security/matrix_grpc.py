"""The operation matrix's gRPC cases: for every operation of the table, requests that
reach the seeded data (and, where an input changes the operation's effect, one case per
effect, with the domain input the effect is read from)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from google.protobuf import field_mask_pb2
from google.protobuf.message import Message

from memoryd.domain.changes import WatchQuery
from memoryd.domain.lifecycle import (
    CompactOptions,
    MaintenanceOptions,
)
from memoryd.operations.lifecycle import ExportRequest
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import snapshot_service_pb2 as spb
from tests.security.matrix_seed import (
    ATTACHMENT_SEQ,
    COMPONENT,
    EMAIL,
    EMAIL2,
    EVERYTHING,
    KEYS,
    MARK2,
    MEMORIES,
    PHONE2,
    SEED_KEY,
    SEED_MEMORIES,
    SESSION,
    STATE,
    THREAD,
    Seeded,
    now,
    user_source,
    web_source,
)

Request = Message | Sequence[Message]
WRITTEN = f"{MARK2}: the new tenant is reachable at {EMAIL2} or {PHONE2}"


@dataclass(frozen=True)
class GrpcCase:
    #: The operation ("<Service>.<Method>").
    op: str
    label: str
    request: Callable[[Seeded], Request]
    #: The operation's domain input, for operations whose effect depends on it.
    value: object | None = None
    #: Whether the admin's outcome carries personal data (so a masked caller's must
    #: carry placeholders): a check that the case reaches the seeded data.
    shows_pii: bool = False
    #: What a write's own agent is seeded with (reads run on a fully seeded one).
    seeds: frozenset[str] = EVERYTHING
    #: Refused below the highest clearance (it removes and counts what such a caller
    #: may not read): PERMISSION_DENIED for a masked principal that has the role.
    highest_clearance: bool = False

    @property
    def id(self) -> str:
        return f"{self.op}[{self.label}]" if self.label else self.op


def _scope() -> pb.WorkingMemoryScope:
    return pb.WorkingMemoryScope(thread_id=THREAD)


def _import(s: Seeded) -> list[Message]:
    stamp = now()
    header = lpb.ExportRecord(header=lpb.ExportHeader(format="memoryd.export.v1"))
    memory = pb.Memory(
        id=str(uuid.uuid4()),
        agent_id=s.agent,
        content=WRITTEN,
        created_at=stamp,
        updated_at=stamp,
        memory_type=pb.MEMORY_TYPE_FACT,
        security_level=pb.SECURITY_LEVEL_INTERNAL,
        version=1,
    )
    return [
        lpb.ImportRequest(record=header, target_agent_id=s.agent),
        lpb.ImportRequest(record=lpb.ExportRecord(memory=lpb.ExportedMemory(memory=memory))),
    ]


def _as_of() -> pb.AsOf:
    """As of now: the seeded data as it is (docs/as-of.md), through the as-of path."""
    return pb.AsOf(time=now())


def _remember(content: str, **extra: object) -> mpb.RememberRequest:
    return mpb.RememberRequest(content=content, **extra)  # type: ignore[arg-type]


_MERGE = {"merge_group_threshold": 2, "merge_similarity": 0.01}
_CONSOLIDATE = {"min_age_days": 0, "min_group_size": 2, "tags": ["pii"]}

C = GrpcCase
CASES: tuple[GrpcCase, ...] = (
    # ------------------------------------------------------------ long-term memory
    C(
        "MemoryService.Remember",
        "new",
        lambda s: mpb.RememberRequest(
            agent_id=s.agent,
            content=WRITTEN,
            tags=[EMAIL2],
            metadata_json=json.dumps({"mail": EMAIL2}),
            source=web_source(EMAIL2, PHONE2),
        ),
        shows_pii=True,
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "MemoryService.Remember",
        "deduplicated",
        lambda s: mpb.RememberRequest(agent_id=s.agent, content=SEED_MEMORIES[0], tags=["pii"]),
        shows_pii=True,
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "MemoryService.RememberBatch",
        "",
        lambda s: mpb.RememberBatchRequest(
            agent_id=s.agent,
            items=[_remember(WRITTEN), _remember(f"{MARK2} pays rent to {EMAIL2} each month")],
        ),
        shows_pii=True,
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "MemoryService.Recall",
        "",
        lambda s: mpb.RecallRequest(agent_id=s.agent, query="Alice email phone lease", limit=10),
        shows_pii=True,
    ),
    C(
        "MemoryService.Recall",
        "as_of",
        lambda s: mpb.RecallRequest(
            agent_id=s.agent, query="Alice email phone lease", limit=10, as_of=_as_of()
        ),
        shows_pii=True,
    ),
    C(
        "MemoryService.GetMemory",
        "",
        lambda s: mpb.GetMemoryRequest(agent_id=s.agent, id=s.memory_ids[0]),
        shows_pii=True,
    ),
    C(
        "MemoryService.ListMemories",
        "",
        lambda s: mpb.ListMemoriesRequest(agent_id=s.agent, page_size=50),
        shows_pii=True,
    ),
    C(
        "MemoryService.UpdateMemory",
        "importance",
        lambda s: mpb.UpdateMemoryRequest(
            agent_id=s.agent,
            memory=pb.Memory(id=s.memory_ids[0], importance=0.9),
            update_mask=field_mask_pb2.FieldMask(paths=["importance"]),
        ),
        shows_pii=True,
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "MemoryService.ForgetMemories",
        "",
        lambda s: mpb.ForgetMemoriesRequest(agent_id=s.agent, ids=[s.memory_ids[1]]),
        seeds=frozenset({MEMORIES}),
    ),
    # ------------------------------------------------------------ keyed memory
    C(
        "MemoryService.SetMemory",
        "",
        lambda s: mpb.SetMemoryRequest(
            agent_id=s.agent,
            key=f"/people/{EMAIL2}/note",
            content_json=json.dumps({"text": WRITTEN, "n": 1.50}),
            source=user_source(),
        ),
        shows_pii=True,
        seeds=frozenset({KEYS}),
    ),
    C(
        "MemoryService.GetKey",
        "",
        lambda s: mpb.GetKeyRequest(agent_id=s.agent, key=SEED_KEY),
        shows_pii=True,
    ),
    C(
        "MemoryService.GetKey",
        "as_of",
        lambda s: mpb.GetKeyRequest(agent_id=s.agent, key=SEED_KEY, as_of=_as_of()),
        shows_pii=True,
    ),
    C(
        "MemoryService.ListKeys",
        "",
        lambda s: mpb.ListKeysRequest(agent_id=s.agent, prefix="/", recursive=True),
        shows_pii=True,
    ),
    C(
        "MemoryService.ListKeys",
        "as_of",
        lambda s: mpb.ListKeysRequest(agent_id=s.agent, prefix="/", recursive=True, as_of=_as_of()),
        shows_pii=True,
    ),
    C(
        "MemoryService.ListKeys",
        "directories",
        lambda s: mpb.ListKeysRequest(agent_id=s.agent, prefix="/people/"),
        shows_pii=True,
    ),
    C(
        "MemoryService.KeyHistory",
        "",
        lambda s: mpb.KeyHistoryRequest(agent_id=s.agent, key=SEED_KEY),
        shows_pii=True,
    ),
    # ------------------------------------------------------------ working memory, profile
    C(
        "MemoryService.SetWorkingMemory",
        "merge",
        lambda s: mpb.SetWorkingMemoryRequest(
            agent_id=s.agent,
            scope=_scope(),
            content_json=json.dumps({"added": WRITTEN}),
            mode=mpb.WORKING_MEMORY_MODE_MERGE,
        ),
        shows_pii=True,
        seeds=frozenset({STATE}),
    ),
    C(
        "MemoryService.GetWorkingMemory",
        "",
        lambda s: mpb.GetWorkingMemoryRequest(agent_id=s.agent, scope=_scope()),
        shows_pii=True,
    ),
    C(
        "MemoryService.DeleteWorkingMemory",
        "",
        lambda s: mpb.DeleteWorkingMemoryRequest(agent_id=s.agent, scope=_scope()),
        seeds=frozenset({STATE}),
    ),
    C(
        "MemoryService.ListWorkingMemoryScopes",
        "",
        lambda s: mpb.ListWorkingMemoryScopesRequest(agent_id=s.agent),
        shows_pii=True,
    ),
    C(
        "MemoryService.GetProfile",
        "",
        lambda s: mpb.GetProfileRequest(agent_id=s.agent),
        shows_pii=True,
    ),
    C(
        "MemoryService.SetProfile",
        "",
        lambda s: mpb.SetProfileRequest(agent_id=s.agent, content=f"# Agent\n{WRITTEN}\n"),
        shows_pii=True,
        seeds=frozenset({STATE}),
    ),
    # ------------------------------------------------------------ sessions
    C(
        "MemoryService.AppendMessages",
        "",
        lambda s: mpb.AppendMessagesRequest(
            agent_id=s.agent,
            session_id=SESSION,
            messages=[mpb.SessionMessage(role=mpb.MESSAGE_ROLE_USER, content=WRITTEN)],
        ),
        seeds=frozenset({STATE}),
    ),
    C(
        "MemoryService.GetSessionWindow",
        "",
        lambda s: mpb.GetSessionWindowRequest(agent_id=s.agent, session_id=SESSION),
        shows_pii=True,
    ),
    C(
        "MemoryService.GetSessionAttachment",
        "",
        lambda s: mpb.GetSessionAttachmentRequest(
            agent_id=s.agent, session_id=SESSION, seq=ATTACHMENT_SEQ
        ),
        shows_pii=True,
    ),
    C(
        "MemoryService.InjectInstruction",
        "",
        lambda s: mpb.InjectInstructionRequest(
            agent_id=s.agent,
            session_id=SESSION,
            kind=mpb.FIXED_ZONE_KIND_INSTRUCTION,
            content=WRITTEN,
        ),
        shows_pii=True,
        seeds=frozenset({STATE}),
    ),
    C(
        "MemoryService.EndSession",
        "extract",
        lambda s: mpb.EndSessionRequest(
            agent_id=s.agent, session_id=SESSION, extract_memories=True
        ),
        shows_pii=True,
        seeds=frozenset({STATE}),
    ),
    C(
        "MemoryService.GetSessionMessages",
        "",
        lambda s: mpb.GetSessionMessagesRequest(agent_id=s.agent, session_id=SESSION),
        shows_pii=True,
    ),
    C(
        "MemoryService.DeleteMessages",
        "",
        lambda s: mpb.DeleteMessagesRequest(agent_id=s.agent, session_id=SESSION, seqs=[1]),
        seeds=frozenset({STATE}),
    ),
    C(
        "MemoryService.ClearSession",
        "",
        lambda s: mpb.ClearSessionRequest(agent_id=s.agent, session_id=SESSION),
        seeds=frozenset({STATE}),
    ),
    # ------------------------------------------------------------ snapshots and state
    C(
        "SnapshotService.BuildSnapshot",
        "markdown",
        lambda s: spb.BuildSnapshotRequest(
            agent_id=s.agent,
            trigger="Alice email phone lease",
            scope=_scope(),
            session_id=SESSION,
            token_budget=4000,
        ),
        shows_pii=True,
    ),
    C(
        "SnapshotService.BuildSnapshot",
        "xml",
        lambda s: spb.BuildSnapshotRequest(
            agent_id=s.agent,
            trigger="invoices garden",
            scope=_scope(),
            session_id=SESSION,
            format=spb.SNAPSHOT_FORMAT_XML,
        ),
        shows_pii=True,
    ),
    C(
        "SnapshotService.DefaultRead",
        "",
        lambda s: spb.DefaultReadRequest(agent_id=s.agent, token_limit=2000),
        shows_pii=True,
    ),
    C(
        "SnapshotService.DefaultRead",
        "as_of",
        lambda s: spb.DefaultReadRequest(agent_id=s.agent, token_limit=2000, as_of=_as_of()),
        shows_pii=True,
    ),
    C(
        "SnapshotService.BuildSnapshot",
        "as_of",
        lambda s: spb.BuildSnapshotRequest(
            agent_id=s.agent, trigger="Alice email phone lease", token_budget=4000, as_of=_as_of()
        ),
        shows_pii=True,
    ),
    C(
        "SnapshotService.SaveState",
        "",
        lambda s: spb.SaveStateRequest(
            agent_id=s.agent,
            session_id=SESSION,
            components=[spb.StateComponent(name="notes", state_json=json.dumps({"text": WRITTEN}))],
        ),
        shows_pii=True,
        seeds=frozenset({STATE}),
    ),
    C(
        "SnapshotService.LoadState",
        "",
        lambda s: spb.LoadStateRequest(agent_id=s.agent, session_id=SESSION, names=[COMPONENT]),
        shows_pii=True,
    ),
    # ------------------------------------------------------------ lifecycle
    C("LifecycleService.GetStats", "", lambda s: lpb.GetStatsRequest(agent_id=s.agent)),
    C(
        "LifecycleService.Archive",
        "",
        lambda s: lpb.ArchiveRequest(
            agent_id=s.agent, selector=lpb.MemorySelector(ids=[s.memory_ids[2]])
        ),
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "LifecycleService.Restore",
        "",
        lambda s: lpb.RestoreRequest(
            agent_id=s.agent, selector=lpb.MemorySelector(ids=[s.memory_ids[2]])
        ),
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "LifecycleService.Prune",
        "",
        lambda s: lpb.PruneRequest(agent_id=s.agent, tags=["pii"]),
        seeds=frozenset({MEMORIES}),
    ),
    C("LifecycleService.Reset", "", lambda s: lpb.ResetRequest(agent_id=s.agent, confirm=True)),
    C(
        "LifecycleService.Compact",
        "policy",
        lambda s: lpb.CompactRequest(agent_id=s.agent),
        value=CompactOptions(),
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "LifecycleService.Compact",
        "merge-overrides",
        lambda s: lpb.CompactRequest(agent_id=s.agent, **_MERGE),  # type: ignore[arg-type]
        value=CompactOptions(**_MERGE),  # type: ignore[arg-type],
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "LifecycleService.RunMaintenance",
        "policy",
        lambda s: lpb.RunMaintenanceRequest(agent_id=s.agent),
        value=MaintenanceOptions(),
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "LifecycleService.RunMaintenance",
        "retention",
        lambda s: lpb.RunMaintenanceRequest(agent_id=s.agent, retention_days=1),
        value=MaintenanceOptions(retention_days=1),
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "LifecycleService.RunMaintenance",
        "max-entries",
        lambda s: lpb.RunMaintenanceRequest(agent_id=s.agent, max_entries=1),
        value=MaintenanceOptions(max_entries=1),
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "LifecycleService.Consolidate",
        "dry-run",
        lambda s: lpb.ConsolidateRequest(agent_id=s.agent, dry_run=True, **_CONSOLIDATE),  # type: ignore[arg-type]
        shows_pii=True,
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "LifecycleService.Consolidate",
        "",
        lambda s: lpb.ConsolidateRequest(agent_id=s.agent, **_CONSOLIDATE),  # type: ignore[arg-type]
        shows_pii=True,
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "MemoryService.Watch",
        "agent",
        lambda s: mpb.WatchRequest(agent_id=s.agent, start=mpb.WATCH_START_OLDEST),
        value=WatchQuery(),
        shows_pii=True,
    ),
    C(
        "MemoryService.Watch",
        "tenant-wide",
        lambda s: mpb.WatchRequest(tenant_wide=True, start=mpb.WATCH_START_OLDEST),
        value=WatchQuery(tenant_wide=True),
        shows_pii=True,
    ),
    C(
        "LifecycleService.Export",
        "agent",
        lambda s: lpb.ExportRequest(agent_id=s.agent),
        value=ExportRequest(),
        shows_pii=True,
    ),
    C(
        "LifecycleService.Export",
        "all-agents",
        lambda s: lpb.ExportRequest(all_agents=True),
        value=ExportRequest(all_agents=True),
        shows_pii=True,
    ),
    C("LifecycleService.Import", "", _import, seeds=frozenset({MEMORIES})),
    C(
        "LifecycleService.Reembed",
        "",
        lambda s: lpb.ReembedRequest(agent_id=s.agent),
        seeds=frozenset({MEMORIES}),
    ),
    C(
        "LifecycleService.Erase",
        "",
        lambda s: lpb.EraseRequest(agent_id=s.agent, whole_agent=True),
        highest_clearance=True,
    ),
    # Every tenant's folders hold the seeded email: only the caller's may be scanned.
    C("LifecycleService.VerifyErasure", "", lambda s: lpb.VerifyErasureRequest(needles=[EMAIL])),
)
