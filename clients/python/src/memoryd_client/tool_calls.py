"""The tool table's tools as gRPC calls: what each tool call sends, and its result as
the table's structured output.

:func:`plan_tool_call` turns a checked tool call into one :class:`ToolPlan` (pure:
nothing is sent); the OpenAI-style dispatcher (:mod:`memoryd_client.tools`) and the
MCP stdio bridge (``memoryd mcp``) run the plans. The keyed tools' plans are in
:mod:`memoryd_client.tool_calls_keyed`, the erasure tools' in
:mod:`memoryd_client.tool_calls_erasure`. The ``memory`` file tool takes several calls
and runs on an async client (:class:`AsyncToolRunner`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from memoryd_client import requests as rq
from memoryd_client.core import Unary
from memoryd_client.errors import NotFoundError
from memoryd_client.memory_files import run_memory_command
from memoryd_client.ops import agent_state, memories, snapshot
from memoryd_client.results import (
    Appended,
    Recalled,
    SessionAttachment,
    SessionWindow,
    WorkingMemory,
)
from memoryd_client.tool_args import as_of_point, check_arguments, trust_keywords
from memoryd_client.tool_calls_erasure import erasure_plan
from memoryd_client.tool_calls_keyed import KEYED_PLANS, ClientFiles
from memoryd_client.tool_plan import JSON, ToolPlan, iso_time, mapped, source_pb, with_degraded
from memoryd_client.tool_results import RECORD_TAG, merged_hits, snapshot_item
from memoryd_client.tool_specs_erasure import ERASURE_TOOLS
from memoryd_client.tool_table import TOOLS, ToolArgumentError
from memoryd_proto.v1 import common_pb2

if TYPE_CHECKING:
    from memoryd_client.aio import AsyncMemorydClient


@dataclass(frozen=True, slots=True)
class ToolContext:
    """Whose memory the tools use. A tool call's own ``agent_id`` / ``session_id`` /
    ``thread_id`` / ``resource_id`` / ``namespace`` (MCP) take precedence; the
    OpenAI-style tools never show them to the model."""

    agent_id: str
    session_id: str = ""
    thread_id: str = ""
    resource_id: str = ""
    namespace: str = ""


def hits(r: Recalled) -> JSON:
    out = []
    for h in r:
        hit: JSON = {
            "id": h.memory.id,
            "content": h.memory.content,
            "memory_type": h.memory.memory_type,
            "tags": list(h.memory.tags),
            "score": round(h.score, 4),
            "relevance": round(h.relevance, 4),
        }
        if h.memory.key:
            hit["key"] = h.memory.key
        if h.memory.source is not None:
            hit["source"] = h.memory.source.kind
        out.append(hit)
    return with_degraded({"memories": out}, r.degraded)


def window(w: SessionWindow) -> JSON:
    out: JSON = {
        "pinned": [{"kind": e.kind, "content": e.content} for e in w.fixed_zone],
        "summary": w.summary,
        "messages": [{"role": m.role, "content": m.content} for m in w.recent],
        "tokens_used": w.tokens_used,
    }
    if w.long_term_memory_mode != "agent_control":
        out["long_term_memory"] = w.long_term_memory
    return with_degraded(out, w.degraded)


def working(w: WorkingMemory) -> JSON:
    return {"content": w.content, "version": w.version, "expires_at": iso_time(w.expires_at)}


def _with_source(call: Unary[Any], value: Any) -> Unary[Any]:
    source = source_pb(value)
    if source is not None:
        call.request.source.CopyFrom(source)
    return call


def _record(agent: str, namespace: str, messages: list[JSON]) -> Unary[JSON]:
    """AgentScope's long-term ``record``: each message an episode in long-term memory."""
    items: list[rq.BatchItem] = [
        {
            "content": m["content"],
            "memory_type": "episode",
            "tags": [f"role:{m['role']}"],
            "namespace": namespace,
        }
        for m in messages
    ]
    return mapped(
        memories.remember_batch(agent, items), lambda out: {"ids": [r.memory.id for r in out]}
    )


def _record_to_memory(agent: str, namespace: str, args: Mapping[str, Any]) -> ToolPlan:
    """AgentScope's ``record_to_memory``: each content item a fact, the thinking kept
    with it (metadata), the agent its source."""
    items: list[rq.BatchItem] = []
    for i, content in enumerate(args["content"]):
        request = rq.remember_request(
            "",
            content,
            memory_type="fact",
            tags=[RECORD_TAG],
            namespace=namespace,
            metadata={"thinking": args["thinking"]},
            field_prefix=f"content[{i}].",
        )
        request.source.CopyFrom(_AGENT_SOURCE)
        items.append(request)

    def render(out: list[Any]) -> JSON:
        ids = list(dict.fromkeys(r.memory.id for r in out))
        text = f"Recorded {len(args['content'])} item(s) in long-term memory."
        return with_degraded({"ids": ids, "text": text}, out[0].degraded if out else ())

    return ToolPlan(mapped(memories.remember_batch(agent, items), render))


def _retrieve_from_memory(agent: str, namespace: str, args: Mapping[str, Any]) -> ToolPlan:
    """AgentScope's ``retrieve_from_memory``: each keyword recalled on its own, the
    hits merged (best score of each memory), best first."""
    keywords = list(dict.fromkeys(args["keywords"]))
    calls = [
        mapped(
            memories.recall(agent, k, limit=args.get("limit", 5), namespace=namespace or None),
            hits,
        )
        for k in keywords
    ]
    return ToolPlan(calls[0], rest=tuple(calls[1:]), combine=merged_hits)


_AGENT_SOURCE = common_pb2.Provenance(
    kind=common_pb2.PROVENANCE_KIND_AGENT, name=RECORD_TAG, locator=RECORD_TAG
)


def plan_tool_call(context: ToolContext, name: str, args: Mapping[str, Any]) -> ToolPlan:
    """The call tool ``name`` makes with ``args`` (checked by
    :func:`~memoryd_client.tool_args.check_arguments`). Pure: nothing is sent."""
    agent = args.get("agent_id") or context.agent_id
    session = args.get("session_id") or context.session_id
    thread = args.get("thread_id", context.thread_id)
    resource = args.get("resource_id", context.resource_id)
    namespace = args.get("namespace", context.namespace)
    if name == "remember":
        call = memories.remember(
            agent,
            args["content"],
            memory_type=args.get("memory_type", "fact"),
            tags=args.get("tags", ()),
            importance=args.get("importance"),
            namespace=namespace,
            security_level=args.get("security_level"),
            session_id=session if "sequence" in args else args.get("session_id", ""),
            sequence=args.get("sequence", 0),
        )
        return ToolPlan(
            mapped(
                _with_source(call, args.get("source")),
                lambda r: with_degraded(
                    {"id": r.memory.id, "deduplicated": r.deduplicated}, r.degraded
                ),
            )
        )
    if name == "recall" or (name == "retrieve" and args.get("source", "memory") == "memory"):
        if "query" not in args:
            raise ToolArgumentError("query", 'is required with source="memory"')
        recall = memories.recall(
            agent, args["query"], limit=args.get("limit", 5), tags=args.get("tags", ()),
            namespace=namespace or None, min_relevance=args.get("min_relevance", 0.0),
            context_window=args.get("context_window"), as_of=as_of_point(args), **trust_keywords(args),
        )  # fmt: skip
        return ToolPlan(mapped(recall, hits))
    if name in ERASURE_TOOLS:
        call, render = erasure_plan(agent, name, args)
        return ToolPlan(mapped(call, render))
    if name == "forget":
        return ToolPlan(
            mapped(memories.forget(agent, args["ids"]), lambda ids: {"forgotten": list(ids)})
        )
    if name == "record":
        return ToolPlan(_record(agent, namespace, args["messages"]))
    if name == "record_to_memory":
        return _record_to_memory(agent, namespace, args)
    if name == "retrieve_from_memory":
        return _retrieve_from_memory(agent, namespace, args)
    if name in KEYED_PLANS:
        return KEYED_PLANS[name](agent, args)
    if name in _AGENT_STATE:
        return _AGENT_STATE[name](agent, thread, resource, args)
    if not session and name != "build_snapshot":
        raise ToolArgumentError("session_id", "is required: the tool context has no session")
    return _SESSION[name](agent, session, thread, resource, args)


def _get_working(agent: str, thread: str, resource: str, args: Mapping[str, Any]) -> ToolPlan:
    call = agent_state.get_working_memory(agent, thread_id=thread, resource_id=resource)
    missing = {"found": False, "content": {}, "version": 0, "expires_at": None}
    return ToolPlan(mapped(call, lambda w: {"found": True, **working(w)}), missing)


def _update_working(agent: str, thread: str, resource: str, args: Mapping[str, Any]) -> ToolPlan:
    call = agent_state.set_working_memory(
        agent,
        args["updates"],
        thread_id=thread,
        resource_id=resource,
        replace=args.get("replace", False),
        ttl=args.get("ttl_seconds"),
        json_schema=args.get("schema"),
    )
    return ToolPlan(mapped(call, working))


def _read_profile(agent: str, thread: str, resource: str, args: Mapping[str, Any]) -> ToolPlan:
    call = agent_state.get_profile(agent)
    missing = {"found": False, "content": "", "etag": ""}
    return ToolPlan(
        mapped(call, lambda p: {"found": True, "content": p.content, "etag": p.etag}), missing
    )


def _update_profile(agent: str, thread: str, resource: str, args: Mapping[str, Any]) -> ToolPlan:
    call = agent_state.set_profile(agent, args["content"], if_match=args.get("etag", ""))
    return ToolPlan(mapped(call, lambda p: {"etag": p.etag}))


_AGENT_STATE: dict[str, Callable[[str, str, str, Mapping[str, Any]], ToolPlan]] = {
    "get_working_memory": _get_working,
    "update_working_memory": _update_working,
    "read_agent_memory": _read_profile,
    "update_agent_memory": _update_profile,
}


def _snapshot(
    agent: str, session: str, thread: str, resource: str, args: Mapping[str, Any]
) -> ToolPlan:
    call = snapshot.build_snapshot(
        agent,
        args.get("trigger", ""),
        token_budget=args.get("token_budget"),
        format=args.get("format", "markdown"),
        thread_id=thread,
        resource_id=resource,
        session_id=session,
        context_window=args.get("context_window"),
        as_of=as_of_point(args),
        **trust_keywords(args),
    )
    return ToolPlan(
        mapped(
            call,
            lambda s: with_degraded(
                {
                    "text": s.text,
                    "tokens_used": s.tokens_used,
                    "token_budget": s.token_budget,
                    "items": [snapshot_item(i.section, i.id, i.source) for i in s.items],
                },
                s.degraded,
            ),
        )
    )


def _record_messages(
    agent: str, session: str, thread: str, resource: str, args: Mapping[str, Any]
) -> ToolPlan:
    call = agent_state.append_messages(
        agent, session, args["messages"], long_term_memory_mode=args.get("long_term_memory_mode")
    )

    def render(a: Appended) -> JSON:
        out: JSON = {"message_count": a.message_count, "compressed": a.compressed}
        if a.recorded_memory_ids:
            out["recorded_memory_ids"] = list(a.recorded_memory_ids)
        if a.offloaded_seqs:
            out["offloaded_seqs"] = list(a.offloaded_seqs)
        return with_degraded(out, a.degraded)

    return ToolPlan(mapped(call, render))


def _attachment(
    agent: str, session: str, thread: str, resource: str, args: Mapping[str, Any]
) -> ToolPlan:
    call = agent_state.get_session_attachment(
        agent,
        session,
        args["seq"],
        offset=args.get("offset", 0),
        max_chars=args.get("max_chars", 0),
    )
    return ToolPlan(mapped(call, attachment))


def attachment(a: SessionAttachment) -> JSON:
    return {
        "seq": a.seq,
        "content": a.content,
        "size_bytes": a.attachment.size_bytes,
        "chars": a.attachment.chars,
        "next_offset": a.next_offset,
        "name": a.name,
        "tool_call_id": a.tool_call_id,
    }


def _window(
    agent: str, session: str, thread: str, resource: str, args: Mapping[str, Any]
) -> ToolPlan:
    call = agent_state.get_session_window(agent, session, token_budget=args.get("token_budget"))
    return ToolPlan(mapped(call, window))


def _save_state(
    agent: str, session: str, thread: str, resource: str, args: Mapping[str, Any]
) -> ToolPlan:
    call = snapshot.save_state(agent, session, args["components"])
    return ToolPlan(mapped(call, lambda saved: {"saved": {c.name: c.version for c in saved}}))


def _load_state(
    agent: str, session: str, thread: str, resource: str, args: Mapping[str, Any]
) -> ToolPlan:
    call = snapshot.load_state(agent, session, args.get("names", ()))
    return ToolPlan(
        mapped(call, lambda loaded: {"components": {n: c.state for n, c in loaded.items()}})
    )


_SESSION: dict[str, Callable[[str, str, str, str, Mapping[str, Any]], ToolPlan]] = {
    "build_snapshot": _snapshot,
    "record_messages": _record_messages,
    "get_session_window": _window,
    "get_session_attachment": _attachment,
    "retrieve": _window,
    "save_state": _save_state,
    "load_state": _load_state,
}


class AsyncToolRunner:
    """Every tool of the table on an async client (the MCP stdio bridge's backend)."""

    def __init__(self, client: AsyncMemorydClient, context: ToolContext) -> None:
        self.client, self.context = client, context

    async def run(self, name: str, args: Mapping[str, Any], *, with_context: bool = True) -> JSON:
        """Tool ``name``'s structured result; raises ToolArgumentError, KeyError for an
        unknown tool, or the client's MemorydError."""
        checked = check_arguments(name, args, with_context=with_context)
        if name == "memory":
            agent = checked.get("agent_id") or self.context.agent_id
            return await run_memory_command(ClientFiles(self.client, agent), checked)
        plan = plan_tool_call(self.context, name, checked)
        try:
            return plan.result([await self.client.run(call) for call in plan.calls])
        except NotFoundError:
            if plan.missing is None:
                raise
            return dict(plan.missing)


__all__ = ["TOOLS", "AsyncToolRunner", "ToolContext", "ToolPlan", "plan_tool_call"]
