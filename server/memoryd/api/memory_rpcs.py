"""MemoryService: each RPC's operation and its two converters, served by the shapes of
api/binding.py (memoryd.operations defines what each operation is)."""

from __future__ import annotations

from memoryd.api import convert
from memoryd.api.binding import Binding, ServerStream, Unary
from memoryd.api.convert.common import as_of_from
from memoryd.operations import agent_state as ops_state
from memoryd.operations import changes as ops_changes
from memoryd.operations import keyed as ops_keyed
from memoryd.operations import memories as ops
from memoryd.operations.agent_state import (
    Append,
    ClearRequest,
    DeleteMessages,
    EndRequest,
    Inject,
    Nothing,
    ProfileWrite,
    WindowRequest,
)
from memoryd.operations.keyed import KeyRef
from memoryd.operations.memories import MemoryIds, MemoryRef, MemoryUpdate
from memoryd_proto.v1 import memory_service_pb2 as mpb


def _append(request: mpb.AppendMessagesRequest) -> Append:
    return Append(
        request.session_id,
        convert.message_drafts_from(request),
        convert.append_ttl_from(request),
        convert.append_compression_from(request),
        convert.long_term_mode_from(request),
    )


def _inject(request: mpb.InjectInstructionRequest) -> Inject:
    return Inject(request.session_id, convert.fixed_zone_kind_from(request), request.content)


_LONG_TERM: tuple[Binding, ...] = (
    Unary(ops.REMEMBER, convert.draft_from, convert.remember_response),
    Unary(ops.REMEMBER_BATCH, convert.batch_drafts_from, convert.remember_batch_response),
    Unary(ops.RECALL, convert.recall_query_from, convert.recall_response),
    Unary(
        ops.GET_MEMORY,
        lambda r: MemoryRef(r.id),
        lambda m: mpb.GetMemoryResponse(memory=convert.memory_to_proto(m)),
    ),
    Unary(ops.LIST_MEMORIES, convert.list_query_from, convert.list_response),
    Unary(
        ops.UPDATE_MEMORY,
        lambda r: MemoryUpdate(r.memory.id, convert.patch_from(r)),
        lambda m: mpb.UpdateMemoryResponse(memory=convert.memory_to_proto(m)),
    ),
    Unary(
        ops.FORGET_MEMORIES,
        lambda r: MemoryIds(tuple(r.ids)),
        lambda ids: mpb.ForgetMemoriesResponse(forgotten_ids=ids),
    ),
)
_KEYED: tuple[Binding, ...] = (
    Unary(ops_keyed.SET_MEMORY, convert.key_write_from, convert.set_memory_response),
    Unary(ops_keyed.GET_KEY, lambda r: KeyRef(r.key, as_of_from(r)), convert.get_key_response),
    Unary(ops_keyed.LIST_KEYS, convert.key_list_query_from, convert.list_keys_response),
    Unary(ops_keyed.KEY_HISTORY, convert.key_history_query_from, convert.key_history_response),
)
_WORKING_AND_PROFILE: tuple[Binding, ...] = (
    Unary(
        ops_state.SET_WORKING_MEMORY,
        convert.working_write_from,
        lambda wm: mpb.SetWorkingMemoryResponse(working_memory=convert.working_memory_to_proto(wm)),
    ),
    Unary(
        ops_state.GET_WORKING_MEMORY,
        lambda r: convert.working_scope_from(r.scope),
        lambda wm: mpb.GetWorkingMemoryResponse(working_memory=convert.working_memory_to_proto(wm)),
    ),
    Unary(
        ops_state.DELETE_WORKING_MEMORY,
        lambda r: convert.working_scope_from(r.scope),
        lambda deleted: mpb.DeleteWorkingMemoryResponse(deleted=deleted),
    ),
    Unary(
        ops_state.LIST_WORKING_MEMORY_SCOPES,
        convert.working_scope_query_from,
        convert.list_scopes_response,
    ),
    Unary(
        ops_state.GET_PROFILE,
        lambda _: Nothing(),
        lambda p: mpb.GetProfileResponse(profile=convert.profile_to_proto(p)),
    ),
    Unary(
        ops_state.SET_PROFILE,
        lambda r: ProfileWrite(r.content, r.if_match),
        lambda p: mpb.SetProfileResponse(profile=convert.profile_to_proto(p)),
    ),
)
_SESSIONS: tuple[Binding, ...] = (
    Unary(ops_state.APPEND_MESSAGES, _append, convert.append_response),
    Unary(
        ops_state.GET_SESSION_WINDOW,
        lambda r: WindowRequest(r.session_id, r.token_budget or None),
        convert.window_response,
    ),
    Unary(ops_state.INJECT_INSTRUCTION, _inject, convert.inject_response),
    Unary(
        ops_state.END_SESSION,
        lambda r: EndRequest(r.session_id, r.extract_memories),
        convert.end_session_response,
    ),
    Unary(ops_state.GET_SESSION_MESSAGES, convert.messages_query_from, convert.messages_response),
    Unary(
        ops_state.DELETE_MESSAGES,
        lambda r: DeleteMessages(r.session_id, tuple(r.seqs)),
        convert.delete_messages_response,
    ),
    Unary(
        ops_state.CLEAR_SESSION,
        lambda r: ClearRequest(r.session_id, r.fixed_zone),
        lambda deleted: mpb.ClearSessionResponse(deleted=deleted),
    ),
    Unary(
        ops_state.GET_SESSION_ATTACHMENT,
        convert.attachment_query_from,
        convert.attachment_response,
    ),
)

#: memoryd.v1.MemoryService's RPCs, in the contract's order.
_CHANGES: tuple[Binding, ...] = (
    ServerStream(ops_changes.WATCH, convert.watch_query_from, convert.watch_response),
)

MEMORY_RPCS: tuple[Binding, ...] = (
    *_LONG_TERM,
    *_KEYED,
    *_WORKING_AND_PROFILE,
    *_SESSIONS,
    *_CHANGES,
)
