"""SnapshotService: BuildSnapshot, DefaultRead, SaveState and LoadState."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from datetime import datetime
from typing import Literal

from memoryd_client import requests as rq
from memoryd_client.core import Unary
from memoryd_client.results import (
    DefaultRead,
    DefaultReadLine,
    Snapshot,
    StateComponent,
    provenance_of,
)
from memoryd_client.wire_values import json_or, when
from memoryd_proto.v1 import common_pb2, snapshot_service_pb2

SECTION_PREFIX = "SNAPSHOT_SECTION_"


def _sections(values: Iterable[rq.EnumArg], field: str) -> list[int]:
    return [
        rq.enum_value(v, snapshot_service_pb2.SnapshotSection, SECTION_PREFIX, f"{field}[{i}]")
        for i, v in enumerate(values)
    ]


def build_snapshot_request(
    agent_id: str,
    trigger: str = "",
    *,
    token_budget: int | None = None,
    format: Literal["markdown", "xml", "user_memory"] = "markdown",
    focus: str = "",
    namespace: str | None = None,
    thread_id: str = "",
    resource_id: str = "",
    session_id: str = "",
    sections: Iterable[rq.EnumArg] = (),
    priority: Iterable[rq.EnumArg] = (),
    semantic_limit: int | None = None,
    recent_limit: int | None = None,
    trust: Iterable[rq.EnumArg] | None = None,
    trust_unattributed: bool = False,
    context_window: int | None = None,
) -> snapshot_service_pb2.BuildSnapshotRequest:
    request = snapshot_service_pb2.BuildSnapshotRequest(
        agent_id=agent_id,
        trigger=trigger,
        focus=focus,
        token_budget=rq.positive_or_unset(token_budget, "token_budget"),
        format=rq.enum_value(
            format, snapshot_service_pb2.SnapshotFormat, "SNAPSHOT_FORMAT_", "format"
        ),  # type: ignore[arg-type]
        session_id=session_id,
        sections=_sections(sections, "sections"),  # type: ignore[arg-type]
        priority=_sections(priority, "priority"),  # type: ignore[arg-type]
        semantic_limit=rq.positive_or_unset(semantic_limit, "semantic_limit"),
        recent_limit=rq.positive_or_unset(recent_limit, "recent_limit"),
    )
    if thread_id or resource_id:
        request.scope.CopyFrom(
            common_pb2.WorkingMemoryScope(thread_id=thread_id, resource_id=resource_id)
        )
    if namespace is not None:
        request.namespace = namespace
    if trust is not None:
        request.trust.CopyFrom(rq.trust_filter(trust, trust_unattributed))
    if context_window is not None:
        request.context_window = context_window
    return request


def build_snapshot(
    agent_id: str,
    trigger: str = "",
    *,
    token_budget: int | None = None,
    format: Literal["markdown", "xml", "user_memory"] = "markdown",
    focus: str = "",
    namespace: str | None = None,
    thread_id: str = "",
    resource_id: str = "",
    session_id: str = "",
    sections: Iterable[rq.EnumArg] = (),
    priority: Iterable[rq.EnumArg] = (),
    semantic_limit: int | None = None,
    recent_limit: int | None = None,
    trust: Iterable[rq.EnumArg] | None = None,
    trust_unattributed: bool = False,
    context_window: int | None = None,
    as_of: rq.AsOfArg | None = None,
) -> Unary[Snapshot]:
    """What an agent run starts with: semantic hits for ``trigger``, recent and pinned
    memories, the profile, the scope's working memory and the session window,
    deduplicated and cut to ``token_budget`` (never exceeded).

    ``trust``: only memories of these provenance kinds (``["user"]``: user-stated
    only), and with ``trust_unattributed`` those remembered without a source too;
    None: any provenance; ``context_window``: the semantic section adds the turns this
    many steps either side of its best hit, from its session (0..5; None: the daemon's
    default); ``as_of``: the snapshot as built at a past time or log position
    (docs/as-of.md: its memory sections only)."""
    request = build_snapshot_request(
        agent_id,
        trigger,
        token_budget=token_budget,
        format=format,
        focus=focus,
        namespace=namespace,
        thread_id=thread_id,
        resource_id=resource_id,
        session_id=session_id,
        sections=sections,
        priority=priority,
        semantic_limit=semantic_limit,
        recent_limit=recent_limit,
        trust=trust,
        trust_unattributed=trust_unattributed,
        context_window=context_window,
    )
    rq.set_as_of(request, as_of)
    return Unary("snapshot", "BuildSnapshot", request, Snapshot.from_pb, idempotent=True)


def default_read(
    agent_id: str,
    *,
    token_limit: int | None = None,
    tags: rq.StrSeq = (),
    prefix: str = "",
    current_time: datetime | None = None,
    as_of: rq.AsOfArg | None = None,
) -> Unary[DefaultRead]:
    """Passive retrieval over keyed memory: one compact line per valid, unexpired key,
    most recent first, within ``token_limit``; ``as_of``: as read at a past time or
    log position (docs/as-of.md)."""
    request = snapshot_service_pb2.DefaultReadRequest(
        agent_id=agent_id,
        token_limit=rq.positive_or_unset(token_limit, "token_limit"),
        tags=[tags] if isinstance(tags, str) else list(tags),
        prefix=prefix,
    )
    if current_time is not None:
        request.current_time.CopyFrom(rq.timestamp(current_time, "current_time"))
    rq.set_as_of(request, as_of)
    return Unary("snapshot", "DefaultRead", request, _default_read, idempotent=True)


def _default_read(r: snapshot_service_pb2.DefaultReadResponse) -> DefaultRead:
    lines = tuple(
        DefaultReadLine(
            x.key,
            x.type,
            x.summary,
            when(x.updated_at),
            json_or(x.content_json, None),
            x.content_json,
            x.score,
            provenance_of(x.source) if x.HasField("source") else None,
        )
        for x in r.lines
    )
    return DefaultRead(r.text, lines, r.tokens_used, r.token_counter)


def save_state(
    agent_id: str, session_id: str, components: Mapping[str, rq.JsonObjectArg]
) -> Unary[list[StateComponent]]:
    """Save named component states (JSON objects, or :class:`~memoryd_client.JsonText`
    stored as written) of a session; each save bumps the component's version, so it
    is not retried unless the client has ``retry_writes``."""
    request = snapshot_service_pb2.SaveStateRequest(
        agent_id=agent_id,
        session_id=session_id,
        components=[
            snapshot_service_pb2.StateComponent(
                name=name,
                state_json=rq.json_text(state, f"components[{name!r}]", object_only=True),
            )
            for name, state in components.items()
        ],
    )
    return Unary(
        "snapshot",
        "SaveState",
        request,
        lambda r: [StateComponent.from_pb(c) for c in r.components],
        idempotent=False,
    )


def load_state(
    agent_id: str, session_id: str, names: rq.StrSeq = ()
) -> Unary[dict[str, StateComponent]]:
    """Saved component states by name (``names`` empty: all of them)."""
    request = snapshot_service_pb2.LoadStateRequest(
        agent_id=agent_id,
        session_id=session_id,
        names=[names] if isinstance(names, str) else list(names),
    )
    return Unary(
        "snapshot",
        "LoadState",
        request,
        lambda r: {c.name: StateComponent.from_pb(c) for c in r.components},
        idempotent=True,
    )
