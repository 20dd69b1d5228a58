"""The daemon's MCP tools: each one or more operations through the door.

Identity is the transport's, exactly as for gRPC: the request's headers go to the
daemon's authenticator (``Authorization: Bearer <key>`` in api_key mode; the
listener's principal in sidecar mode), the tenant comes from the principal and the
agent from the ``agent_id`` argument (default: the listener's agent), checked against
what the principal may act for. Each operation is one span, a child of the tool call's
(run_tool opens it, parented on the ``traceparent`` of the call's ``_meta``).
"""

from __future__ import annotations

import uuid
from collections.abc import Awaitable, Callable, Sequence
from datetime import datetime, timedelta
from typing import Any, TypeVar

from memoryd.domain.agent_state import (
    AttachmentQuery,
    LongTermMemoryMode,
    MessageDraft,
    MessageRole,
    ToolCall,
    WorkingMemoryMode,
    WorkingMemoryWrite,
    WorkingScope,
)
from memoryd.domain.as_of import AsOf
from memoryd.domain.errors import InvalidArgument, MemorydError, NotFound
from memoryd.domain.json_text import Json
from memoryd.domain.keyed import KeyHistoryQuery, KeyListQuery, KeyWrite
from memoryd.domain.lifecycle import EraseRequest, VerifyErasureRequest
from memoryd.domain.locator import locator_text
from memoryd.domain.models import (
    MemoryFilter,
    MemoryType,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
    TrustFilter,
)
from memoryd.domain.requests import MemoryDraft, RecallQuery, Scoring, ScoringPreset
from memoryd.domain.snapshot import (
    DefaultReadRequest,
    SnapshotFormat,
    SnapshotRequest,
    StateWrite,
)
from memoryd.mcp import render
from memoryd.mcp.errors import ToolFailure
from memoryd.mcp.server import McpRequest
from memoryd.operations import Call, Door, Operation, Outcome
from memoryd.operations import agent_state as state_ops
from memoryd.operations import keyed as keyed_ops
from memoryd.operations import lifecycle as lifecycle_ops
from memoryd.operations import memories as memory_ops
from memoryd.operations import snapshot as snapshot_ops
from memoryd.operations.agent_state import Append, Nothing, ProfileWrite, WindowRequest
from memoryd.operations.auth import Transport
from memoryd.operations.keyed import KeyRef
from memoryd.operations.memories import MemoryIds
from memoryd.operations.snapshot import LoadState, SaveState
from memoryd_client.memory_files import FileWrite, KeyFile, run_memory_command
from memoryd_client.tool_args import as_of_point, parse_source
from memoryd_client.tool_results import RECORD_TAG, merged_hits
from memoryd_client.tool_specs_erasure import checked_json, erased_json
from memoryd_client.tool_table import ToolArgumentError

JSON = dict[str, Any]
I = TypeVar("I")  # noqa: E741
O = TypeVar("O")  # noqa: E741
#: The page size a listing tool reads (its ``limit`` may ask for fewer).
LIST_PAGE = 200

#: The operations each tool may run (a tool running another one fails): the role a
#: tool call needs is that of the operations it runs, exactly as over gRPC, and the
#: tool table's readOnlyHint says whether they are all reads.
TOOL_OPERATIONS: dict[str, tuple[Operation[Any, Any], ...]] = {
    "remember": (memory_ops.REMEMBER,),
    "recall": (memory_ops.RECALL,),
    "forget": (memory_ops.FORGET_MEMORIES,),
    "set_memory": (keyed_ops.SET_MEMORY,),
    "get_memory_key": (keyed_ops.GET_KEY,),
    "list_memory_keys": (keyed_ops.LIST_KEYS,),
    "memory_key_history": (keyed_ops.KEY_HISTORY,),
    "default_read": (snapshot_ops.DEFAULT_READ,),
    "get_working_memory": (state_ops.GET_WORKING_MEMORY,),
    "update_working_memory": (state_ops.SET_WORKING_MEMORY,),
    "read_agent_memory": (state_ops.GET_PROFILE,),
    "update_agent_memory": (state_ops.SET_PROFILE,),
    "build_snapshot": (snapshot_ops.BUILD_SNAPSHOT,),
    "record_messages": (state_ops.APPEND_MESSAGES,),
    "get_session_window": (state_ops.GET_SESSION_WINDOW,),
    "get_session_attachment": (state_ops.GET_SESSION_ATTACHMENT,),
    "record_to_memory": (memory_ops.REMEMBER_BATCH,),
    "retrieve_from_memory": (memory_ops.RECALL,),
    "save_state": (snapshot_ops.SAVE_STATE,),
    "load_state": (snapshot_ops.LOAD_STATE,),
    "memory": (keyed_ops.GET_KEY, keyed_ops.SET_MEMORY, keyed_ops.LIST_KEYS),
    # Admin only (their operations' role, checked by the door as over gRPC).
    "erase": (lifecycle_ops.ERASE,),
    "verify_erasure": (lifecycle_ops.VERIFY_ERASURE,),
}


def provenance(value: Any) -> Provenance | None:
    """A tool's ``source`` argument as a Provenance (the short forms of the table)."""
    parsed = parse_source(value)
    if parsed is None:
        return None
    stamp = parsed.get("retrieved_at")
    try:
        retrieved = datetime.fromisoformat(stamp.replace("Z", "+00:00")) if stamp else None
    except ValueError:
        raise ToolArgumentError("source.retrieved_at", "must be an RFC 3339 time") from None
    return Provenance(
        kind=ProvenanceKind(parsed["kind"]),
        name=str(parsed.get("name", "")),
        retrieved_at=retrieved,
        locator=locator_text(parsed.get("locator", ""), "source.locator"),
    )


def _time_argument(value: str | None, field: str) -> datetime | None:
    """An RFC 3339 argument with a time zone ("Z" or an offset); None stays None."""
    if value is None:
        return None
    try:
        when = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise ToolArgumentError(field, "must be an RFC 3339 time") from None
    if when.tzinfo is None:
        raise ToolArgumentError(field, "must have a time zone (Z or an offset)")
    return when


def failure(error: MemorydError) -> ToolFailure:
    fields = (
        {v.field: v.description for v in error.violations}
        if isinstance(error, InvalidArgument)
        else None
    )
    return ToolFailure(error.status, error.message, fields)


class _Tool:
    """One MCP tool call: its operations share a request id and the caller's identity."""

    def __init__(self, door: Door, name: str, request: McpRequest, agent: str) -> None:
        self.door, self.name, self.request, self.agent = door, name, request, agent
        self.request_id = uuid.uuid4().hex
        self._allowed = TOOL_OPERATIONS[name]

    def _call(self) -> Call:
        return Call(
            request_id=self.request_id,
            label=f"/mcp/{self.name}",
            credentials=Transport(
                metadata=tuple(self.request.headers),
                peer=self.request.peer,
                auth_context=self.request.auth_context,
            ),
            # The tool call's span (run_tool's) is current: this operation's is its child.
            nested=True,
            trace_attributes={"rpc.system": "mcp", "gen_ai.tool.name": self.name},
        )

    async def run(self, op: Operation[I, O], build: Callable[[], I]) -> Outcome[O]:
        try:
            return await self.door.run(self._declared(op), self._call(), self.agent, build)
        except MemorydError as exc:
            raise failure(exc) from None

    async def outcome(self, op: Operation[I, O], build: Callable[[], I]) -> Outcome[O] | None:
        """The operation's outcome, None when it is not found."""
        try:
            return await self.door.run(self._declared(op), self._call(), self.agent, build)
        except NotFound:
            return None
        except MemorydError as exc:
            raise failure(exc) from None

    async def found(self, op: Operation[I, O], build: Callable[[], I]) -> O | None:
        """The operation's value, None when it is not found."""
        out = await self.outcome(op, build)
        return None if out is None else out.value

    def _declared(self, op: Operation[I, O]) -> Operation[I, O]:
        if op not in self._allowed:
            raise RuntimeError(f"tool {self.name!r} runs {op.name}, not in TOOL_OPERATIONS")
        return op


class _Files:
    """The memory file tool's key calls, on keyed memory through the door.

    A file read masked (the caller is below the unmasked clearance) is never written
    back: an edit of the masked text would overwrite what the caller could not see."""

    def __init__(self, tool: _Tool) -> None:
        self._tool = tool
        self._masked_read = ""

    async def read(self, key: str) -> KeyFile | None:
        out = await self._tool.outcome(keyed_ops.GET_KEY, lambda: KeyRef(key))
        if out is None or not out.value.valid:
            return None
        entry = out.value
        if out.masked:
            self._masked_read = key
        if isinstance(entry.content, str):
            return KeyFile(entry.content, entry.version)
        return KeyFile(entry.content_json, entry.version, is_json=True)

    async def write(self, key: str, file: FileWrite) -> int:
        if file.text is not None and self._masked_read:
            raise ToolFailure(
                "PERMISSION_DENIED",
                f"{self._masked_read} holds text masked for this caller's clearance; "
                "writing an edit of it would overwrite what was masked",
            )

        def build() -> KeyWrite:
            if file.text is None:
                content = Json.of(None)
            elif file.is_json:
                content = Json.from_text(file.text, file.field)
            else:
                content = Json.from_value(file.text, file.field)
            return KeyWrite(
                key=key,
                content=content,
                source=Provenance(ProvenanceKind.AGENT, name="memory tool"),
                if_version=file.if_version,
            )

        return (await self._tool.run(keyed_ops.SET_MEMORY, build)).value.version

    async def keys(self, prefix: str) -> list[str]:
        out: list[str] = []
        token = ""
        while True:
            query = KeyListQuery(
                prefix=prefix, recursive=True, page_size=LIST_PAGE, page_token=token
            )
            listing = (await self._tool.run(keyed_ops.LIST_KEYS, _const(query))).value
            out.extend(e.key for e in listing.entries if e.valid)
            token = listing.next_page_token
            if not token:
                return sorted(out)


def _level(args: JSON) -> SecurityLevel | None:
    name = args.get("security_level")
    return SecurityLevel[name.upper()] if name else None


def _as_of(args: JSON) -> AsOf | None:
    """A tool's ``as_of`` argument (the table's shape, checked by as_of_point)."""
    point = as_of_point(args)
    if point is None:
        return None
    return AsOf(instant=point) if isinstance(point, datetime) else AsOf(cursor=point)


def _trust(args: JSON) -> TrustFilter | None:
    """A tool's ``trust`` argument (its kinds checked against the table's enum)."""
    trust = args.get("trust")
    if trust is None:
        return None
    kinds = tuple(ProvenanceKind(k) for k in trust["kinds"])
    return TrustFilter(kinds, unattributed=bool(trust.get("unattributed", False)))


def _const(value: I) -> Callable[[], I]:
    return lambda: value


def _tool_calls(message: JSON, path: str) -> tuple[ToolCall, ...]:
    """A message's tool calls; arguments given as JSON text are parsed (as the chat
    APIs send them), so they are stored and read back as JSON."""
    calls = []
    for j, call in enumerate(message.get("tool_calls") or ()):
        field = f"{path}.tool_calls[{j}].arguments"
        arguments = call.get("arguments")
        if isinstance(arguments, str):
            parsed = Json.from_text(arguments if arguments.strip() else "{}", field)
        else:
            parsed = Json.from_value(arguments, field)
        calls.append(ToolCall(id=call["id"], name=call["name"], arguments=parsed.value))
    return tuple(calls)


def _scope(args: JSON) -> WorkingScope:
    return WorkingScope(args.get("thread_id", ""), args.get("resource_id", ""))


class DoorTools:
    """The tool table's MCP tools on the daemon's door."""

    def __init__(self, door: Door, default_agent: str) -> None:
        self._door = door
        self._default_agent = default_agent
        self._tools: dict[str, Callable[[_Tool, JSON], Awaitable[JSON]]] = {
            "remember": self._remember,
            "recall": self._recall,
            "forget": self._forget,
            "erase": self._erase,
            "verify_erasure": self._verify_erasure,
            "set_memory": self._set_memory,
            "get_memory_key": self._get_key,
            "list_memory_keys": self._list_keys,
            "memory_key_history": self._history,
            "default_read": self._default_read,
            "get_working_memory": self._get_working,
            "update_working_memory": self._update_working,
            "read_agent_memory": self._read_profile,
            "update_agent_memory": self._update_profile,
            "build_snapshot": self._snapshot,
            "record_messages": self._record_messages,
            "get_session_window": self._window,
            "get_session_attachment": self._attachment,
            "record_to_memory": self._record_to_memory,
            "retrieve_from_memory": self._retrieve_from_memory,
            "save_state": self._save_state,
            "load_state": self._load_state,
            "memory": self._memory_files,
        }

    @property
    def default_agent(self) -> str:
        return self._default_agent

    async def call(self, name: str, arguments: JSON, request: McpRequest) -> JSON:
        tool = _Tool(self._door, name, request, arguments.get("agent_id") or self._default_agent)
        return await self._tools[name](tool, arguments)

    # ------------------------------------------------------------ long-term memory

    async def _remember(self, t: _Tool, a: JSON) -> JSON:
        draft = MemoryDraft(
            content=a["content"],
            memory_type=MemoryType(a.get("memory_type", "fact")),
            tags=tuple(a.get("tags", ())),
            importance=a.get("importance"),
            namespace=a.get("namespace", ""),
            source=provenance(a.get("source")),
            security_level=_level(a),
            session_id=a.get("session_id", ""),
            sequence=a.get("sequence", 0),
        )
        out = await t.run(memory_ops.REMEMBER, lambda: draft)
        result = {"id": out.value.memory.id, "deduplicated": out.value.deduplicated}
        return render.with_degraded(result, out.degraded)

    async def _recall(self, t: _Tool, a: JSON) -> JSON:
        query = RecallQuery(
            query=a["query"],
            limit=a.get("limit", 5),
            filter=MemoryFilter(
                namespace=a.get("namespace"), tags=tuple(a.get("tags", ())), trust=_trust(a)
            ),
            min_relevance=a.get("min_relevance"),
            scoring=Scoring(preset=ScoringPreset(a["scoring"]) if a.get("scoring") else None),
            context_window=a.get("context_window"),
            as_of=_as_of(a),
        )
        out = await t.run(memory_ops.RECALL, lambda: query)
        return render.hits(out.value, out.degraded)

    async def _record_to_memory(self, t: _Tool, a: JSON) -> JSON:
        """AgentScope's record_to_memory: each content item a fact (one RememberBatch),
        the thinking kept with it, the agent its source."""
        source = Provenance(ProvenanceKind.AGENT, name=RECORD_TAG, locator=RECORD_TAG)
        drafts = [
            MemoryDraft(
                content=content,
                memory_type=MemoryType.FACT,
                tags=(RECORD_TAG,),
                namespace=a.get("namespace", ""),
                metadata={"thinking": a["thinking"]},
                source=source,
            )
            for content in a["content"]
        ]
        out = await t.run(memory_ops.REMEMBER_BATCH, _const(drafts))
        ids = list(dict.fromkeys(o.memory.id for o in out.value))
        text = f"Recorded {len(drafts)} item(s) in long-term memory."
        return render.with_degraded({"ids": ids, "text": text}, out.degraded)

    async def _retrieve_from_memory(self, t: _Tool, a: JSON) -> JSON:
        """AgentScope's retrieve_from_memory: a Recall per keyword, merged."""
        results = []
        for keyword in dict.fromkeys(a["keywords"]):
            query = RecallQuery(
                query=keyword,
                limit=a.get("limit", 5),
                filter=MemoryFilter(namespace=a.get("namespace")),
            )
            out = await t.run(memory_ops.RECALL, _const(query))
            results.append(render.hits(out.value, out.degraded))
        return merged_hits(results)

    async def _forget(self, t: _Tool, a: JSON) -> JSON:
        out = await t.run(memory_ops.FORGET_MEMORIES, lambda: MemoryIds(tuple(a["ids"])))
        return {"forgotten": list(out.value)}

    # ------------------------------------------------------------ erasure (admin)

    async def _erase(self, t: _Tool, a: JSON) -> JSON:
        request = EraseRequest(
            whole_agent=a.get("whole_agent", False),
            ids=tuple(a.get("ids", ())),
            dry_run=a.get("dry_run", False),
            subject=a.get("subject", ""),
            key_prefix=a.get("key_prefix", ""),
            all_agents=a.get("all_agents", False),
        )
        receipt = (await t.run(lifecycle_ops.ERASE, _const(request))).value
        return erased_json(receipt.places, receipt.ids, receipt.digest, receipt.dry_run)

    async def _verify_erasure(self, t: _Tool, a: JSON) -> JSON:
        request = VerifyErasureRequest(tuple(a["needles"]))
        check = (await t.run(lifecycle_ops.VERIFY_ERASURE, _const(request))).value
        residue = ((r.path, r.needle, r.count) for r in check.residue)
        return checked_json(check.files_scanned, check.bytes_scanned, residue, check.skipped)

    # ------------------------------------------------------------ keyed memory

    async def _set_memory(self, t: _Tool, a: JSON) -> JSON:
        source = provenance(a.get("source"))
        out = await t.run(
            keyed_ops.SET_MEMORY,
            lambda: KeyWrite(
                key=a["key"],
                content=Json.from_value(a["value"], "value"),
                source=source,
                if_version=a.get("if_version"),
                security_level=_level(a),
            ),
        )
        entry = out.value
        result = {
            "key": entry.key,
            "version": entry.version,
            "deleted": not entry.valid,
            "memory_id": entry.memory_id,
        }
        return render.with_degraded(result, out.degraded)

    async def _get_key(self, t: _Tool, a: JSON) -> JSON:
        entry = await t.found(keyed_ops.GET_KEY, lambda: KeyRef(a["key"], _as_of(a)))
        if entry is None:
            return {"found": False, "key": a["key"], "value": None, "version": 0, "deleted": False}
        return {"found": entry.valid, **render.key_version(entry)}

    async def _list_keys(self, t: _Tool, a: JSON) -> JSON:
        limit = a.get("limit", LIST_PAGE)
        query = KeyListQuery(
            prefix=a.get("prefix", "/"),
            recursive=a.get("recursive", False),
            page_size=limit,
            as_of=_as_of(a),
        )
        out = await t.run(keyed_ops.LIST_KEYS, lambda: query)
        listing = out.value
        result = {
            "keys": [render.key_version(e) for e in listing.entries],
            "directories": list(listing.directories),
            "more": bool(listing.next_page_token),
        }
        return render.with_degraded(result, out.degraded)

    async def _history(self, t: _Tool, a: JSON) -> JSON:
        query = KeyHistoryQuery(key=a["key"], page_size=a.get("limit", LIST_PAGE))
        out = await t.run(keyed_ops.KEY_HISTORY, lambda: query)
        result = {
            "versions": [render.key_version(e) for e in out.value.entries],
            "more": bool(out.value.next_page_token),
        }
        return render.with_degraded(result, out.degraded)

    async def _default_read(self, t: _Tool, a: JSON) -> JSON:
        request = DefaultReadRequest(
            token_limit=a.get("token_limit"),
            tags=tuple(a.get("tags", ())),
            current_time=_time_argument(a.get("current_time"), "current_time"),
            prefix=a.get("prefix", ""),
            as_of=_as_of(a),
        )
        return render.default_read((await t.run(snapshot_ops.DEFAULT_READ, lambda: request)).value)

    # ------------------------------------------------------------ working memory, profile

    async def _get_working(self, t: _Tool, a: JSON) -> JSON:
        wm = await t.found(state_ops.GET_WORKING_MEMORY, lambda: _scope(a))
        if wm is None:
            return {"found": False, "content": {}, "version": 0, "expires_at": None}
        return {"found": True, **render.working(wm)}

    async def _update_working(self, t: _Tool, a: JSON) -> JSON:
        def build() -> WorkingMemoryWrite:
            ttl = a.get("ttl_seconds")
            schema = a.get("schema")
            return WorkingMemoryWrite(
                scope=_scope(a),
                content=Json.from_value(a["updates"], "updates", object_only=True),
                mode=WorkingMemoryMode.REPLACE if a.get("replace") else WorkingMemoryMode.MERGE,
                # The table bounds ttl_seconds (tool_args): timedelta would overflow.
                ttl=timedelta(seconds=ttl) if ttl is not None else None,
                json_schema=None
                if schema is None
                else Json.from_value(schema, "schema", object_only=True),
            )

        wm = (await t.run(state_ops.SET_WORKING_MEMORY, build)).value
        return render.working(wm)

    async def _read_profile(self, t: _Tool, a: JSON) -> JSON:
        profile = await t.found(state_ops.GET_PROFILE, Nothing)
        if profile is None:
            return {"found": False, "content": "", "etag": ""}
        return render.profile(profile)

    async def _update_profile(self, t: _Tool, a: JSON) -> JSON:
        write = ProfileWrite(a["content"], a.get("etag", ""))
        profile = (await t.run(state_ops.SET_PROFILE, lambda: write)).value
        return {"etag": profile.etag}

    async def _snapshot(self, t: _Tool, a: JSON) -> JSON:
        scoped = "thread_id" in a or "resource_id" in a
        request = SnapshotRequest(
            trigger=a.get("trigger", ""),
            focus=a.get("focus", ""),
            token_budget=a.get("token_budget"),
            format=SnapshotFormat(a.get("format", "markdown")),
            session_id=a.get("session_id", ""),
            scope=_scope(a) if scoped else None,
            context_window=a.get("context_window"),
            trust=_trust(a),
            as_of=_as_of(a),
        )
        return render.snapshot((await t.run(snapshot_ops.BUILD_SNAPSHOT, lambda: request)).value)

    # ------------------------------------------------------------ sessions and state

    async def _record_messages(self, t: _Tool, a: JSON) -> JSON:
        def build() -> Append:
            drafts: Sequence[MessageDraft] = [
                MessageDraft(
                    role=MessageRole(m["role"]),
                    content=m["content"],
                    name=m.get("name", ""),
                    tool_call_id=m.get("tool_call_id", ""),
                    tool_calls=_tool_calls(m, f"messages[{i}]"),
                )
                for i, m in enumerate(a["messages"])
            ]
            mode = a.get("long_term_memory_mode")
            return Append(
                a["session_id"],
                drafts,
                long_term_memory_mode=LongTermMemoryMode(mode) if mode else None,
            )

        out = await t.run(state_ops.APPEND_MESSAGES, build)
        return render.appended(out.value, out.degraded)

    async def _window(self, t: _Tool, a: JSON) -> JSON:
        request = WindowRequest(a["session_id"], a.get("token_budget"))
        return render.window((await t.run(state_ops.GET_SESSION_WINDOW, lambda: request)).value)

    async def _attachment(self, t: _Tool, a: JSON) -> JSON:
        query = AttachmentQuery(
            a["session_id"], a["seq"], a.get("offset", 0), a.get("max_chars", 0)
        )
        out = await t.run(state_ops.GET_SESSION_ATTACHMENT, lambda: query)
        return render.attachment(out.value)

    async def _save_state(self, t: _Tool, a: JSON) -> JSON:
        def build() -> SaveState:
            writes = [
                StateWrite(name, Json.from_value(state, f"components.{name}", object_only=True))
                for name, state in a["components"].items()
            ]
            return SaveState(a["session_id"], writes)

        saved = (await t.run(snapshot_ops.SAVE_STATE, build)).value
        return {"saved": {c.name: c.version for c in saved}}

    async def _load_state(self, t: _Tool, a: JSON) -> JSON:
        request = LoadState(a["session_id"], tuple(a.get("names", ())))
        out = await t.run(snapshot_ops.LOAD_STATE, lambda: request)
        result = {"components": {c.name: c.state for c in out.value}}
        return render.with_degraded(result, out.degraded)

    async def _memory_files(self, t: _Tool, a: JSON) -> JSON:
        return await run_memory_command(_Files(t), a)
