"""MemoryService: each RPC converts its request, runs its operation through the door
and converts the outcome back (memoryd.operations defines what each one is)."""

from __future__ import annotations

from memoryd.api import convert
from memoryd.operations import Call, Door
from memoryd.operations import agent_state as ops_state
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


class MemoryServicer:
    """The servicer of memoryd.v1.MemoryService; see api/rpc.py for its handlers."""

    def __init__(self, door: Door) -> None:
        self._door = door

    async def Remember(self, request: mpb.RememberRequest, call: Call) -> mpb.RememberResponse:
        out = await self._door.run(
            ops.REMEMBER, call, request.agent_id, lambda: convert.draft_from(request)
        )
        resp = convert.remember_response(out.value)
        resp.degraded.extend(convert.degraded_to_proto(out.degraded))
        return resp

    async def RememberBatch(
        self, request: mpb.RememberBatchRequest, call: Call
    ) -> mpb.RememberBatchResponse:
        out = await self._door.run(
            ops.REMEMBER_BATCH, call, request.agent_id, lambda: convert.batch_drafts_from(request)
        )
        resp = convert.remember_batch_response(out.value)
        resp.degraded.extend(convert.degraded_to_proto(out.degraded))
        return resp

    async def Recall(self, request: mpb.RecallRequest, call: Call) -> mpb.RecallResponse:
        out = await self._door.run(
            ops.RECALL, call, request.agent_id, lambda: convert.recall_query_from(request)
        )
        resp = convert.recall_response(out.value)
        del resp.degraded[:]
        resp.degraded.extend(convert.degraded_to_proto(out.degraded))
        return resp

    async def GetMemory(self, request: mpb.GetMemoryRequest, call: Call) -> mpb.GetMemoryResponse:
        out = await self._door.run(
            ops.GET_MEMORY, call, request.agent_id, lambda: MemoryRef(request.id)
        )
        return mpb.GetMemoryResponse(memory=convert.memory_to_proto(out.value))

    async def ListMemories(
        self, request: mpb.ListMemoriesRequest, call: Call
    ) -> mpb.ListMemoriesResponse:
        out = await self._door.run(
            ops.LIST_MEMORIES, call, request.agent_id, lambda: convert.list_query_from(request)
        )
        return convert.list_response(out.value)

    async def UpdateMemory(
        self, request: mpb.UpdateMemoryRequest, call: Call
    ) -> mpb.UpdateMemoryResponse:
        out = await self._door.run(
            ops.UPDATE_MEMORY,
            call,
            request.agent_id,
            lambda: MemoryUpdate(request.memory.id, convert.patch_from(request)),
        )
        return mpb.UpdateMemoryResponse(memory=convert.memory_to_proto(out.value))

    async def ForgetMemories(
        self, request: mpb.ForgetMemoriesRequest, call: Call
    ) -> mpb.ForgetMemoriesResponse:
        out = await self._door.run(
            ops.FORGET_MEMORIES, call, request.agent_id, lambda: MemoryIds(tuple(request.ids))
        )
        return mpb.ForgetMemoriesResponse(forgotten_ids=out.value)

    # ------------------------------------------------------------ keyed memory

    async def SetMemory(self, request: mpb.SetMemoryRequest, call: Call) -> mpb.SetMemoryResponse:
        out = await self._door.run(
            ops_keyed.SET_MEMORY, call, request.agent_id, lambda: convert.key_write_from(request)
        )
        resp = convert.set_memory_response(out.value)
        resp.degraded.extend(convert.degraded_to_proto(out.degraded))
        return resp

    async def GetKey(self, request: mpb.GetKeyRequest, call: Call) -> mpb.GetKeyResponse:
        out = await self._door.run(
            ops_keyed.GET_KEY, call, request.agent_id, lambda: KeyRef(request.key)
        )
        return convert.get_key_response(out.value)

    async def ListKeys(self, request: mpb.ListKeysRequest, call: Call) -> mpb.ListKeysResponse:
        out = await self._door.run(
            ops_keyed.LIST_KEYS,
            call,
            request.agent_id,
            lambda: convert.key_list_query_from(request),
        )
        return convert.list_keys_response(out.value)

    async def KeyHistory(
        self, request: mpb.KeyHistoryRequest, call: Call
    ) -> mpb.KeyHistoryResponse:
        out = await self._door.run(
            ops_keyed.KEY_HISTORY,
            call,
            request.agent_id,
            lambda: convert.key_history_query_from(request),
        )
        return convert.key_history_response(out.value)

    # ------------------------------------------------------------ working memory

    async def SetWorkingMemory(
        self, request: mpb.SetWorkingMemoryRequest, call: Call
    ) -> mpb.SetWorkingMemoryResponse:
        out = await self._door.run(
            ops_state.SET_WORKING_MEMORY,
            call,
            request.agent_id,
            lambda: convert.working_write_from(request),
        )
        return mpb.SetWorkingMemoryResponse(
            working_memory=convert.working_memory_to_proto(out.value)
        )

    async def GetWorkingMemory(
        self, request: mpb.GetWorkingMemoryRequest, call: Call
    ) -> mpb.GetWorkingMemoryResponse:
        out = await self._door.run(
            ops_state.GET_WORKING_MEMORY,
            call,
            request.agent_id,
            lambda: convert.working_scope_from(request.scope),
        )
        return mpb.GetWorkingMemoryResponse(
            working_memory=convert.working_memory_to_proto(out.value)
        )

    async def DeleteWorkingMemory(
        self, request: mpb.DeleteWorkingMemoryRequest, call: Call
    ) -> mpb.DeleteWorkingMemoryResponse:
        out = await self._door.run(
            ops_state.DELETE_WORKING_MEMORY,
            call,
            request.agent_id,
            lambda: convert.working_scope_from(request.scope),
        )
        return mpb.DeleteWorkingMemoryResponse(deleted=out.value)

    async def ListWorkingMemoryScopes(
        self, request: mpb.ListWorkingMemoryScopesRequest, call: Call
    ) -> mpb.ListWorkingMemoryScopesResponse:
        out = await self._door.run(
            ops_state.LIST_WORKING_MEMORY_SCOPES,
            call,
            request.agent_id,
            lambda: convert.working_scope_query_from(request),
        )
        return convert.list_scopes_response(out.value)

    # ------------------------------------------------------------ profile

    async def GetProfile(
        self, request: mpb.GetProfileRequest, call: Call
    ) -> mpb.GetProfileResponse:
        out = await self._door.run(ops_state.GET_PROFILE, call, request.agent_id, Nothing)
        return mpb.GetProfileResponse(profile=convert.profile_to_proto(out.value))

    async def SetProfile(
        self, request: mpb.SetProfileRequest, call: Call
    ) -> mpb.SetProfileResponse:
        out = await self._door.run(
            ops_state.SET_PROFILE,
            call,
            request.agent_id,
            lambda: ProfileWrite(request.content, request.if_match),
        )
        return mpb.SetProfileResponse(profile=convert.profile_to_proto(out.value))

    # ------------------------------------------------------------ sessions

    async def AppendMessages(
        self, request: mpb.AppendMessagesRequest, call: Call
    ) -> mpb.AppendMessagesResponse:
        def build() -> Append:
            return Append(
                request.session_id,
                convert.message_drafts_from(request),
                convert.append_ttl_from(request),
                convert.append_compression_from(request),
                convert.long_term_mode_from(request),
            )

        out = await self._door.run(ops_state.APPEND_MESSAGES, call, request.agent_id, build)
        return convert.append_response(out.value)

    async def GetSessionWindow(
        self, request: mpb.GetSessionWindowRequest, call: Call
    ) -> mpb.GetSessionWindowResponse:
        out = await self._door.run(
            ops_state.GET_SESSION_WINDOW,
            call,
            request.agent_id,
            lambda: WindowRequest(request.session_id, request.token_budget or None),
        )
        return convert.window_response(out.value)

    async def InjectInstruction(
        self, request: mpb.InjectInstructionRequest, call: Call
    ) -> mpb.InjectInstructionResponse:
        out = await self._door.run(
            ops_state.INJECT_INSTRUCTION,
            call,
            request.agent_id,
            lambda: Inject(
                request.session_id, convert.fixed_zone_kind_from(request), request.content
            ),
        )
        return convert.inject_response(out.value)

    async def EndSession(
        self, request: mpb.EndSessionRequest, call: Call
    ) -> mpb.EndSessionResponse:
        out = await self._door.run(
            ops_state.END_SESSION,
            call,
            request.agent_id,
            lambda: EndRequest(request.session_id, request.extract_memories),
        )
        return convert.end_session_response(out.value)

    async def GetSessionMessages(
        self, request: mpb.GetSessionMessagesRequest, call: Call
    ) -> mpb.GetSessionMessagesResponse:
        out = await self._door.run(
            ops_state.GET_SESSION_MESSAGES,
            call,
            request.agent_id,
            lambda: convert.messages_query_from(request),
        )
        return convert.messages_response(out.value)

    async def DeleteMessages(
        self, request: mpb.DeleteMessagesRequest, call: Call
    ) -> mpb.DeleteMessagesResponse:
        out = await self._door.run(
            ops_state.DELETE_MESSAGES,
            call,
            request.agent_id,
            lambda: DeleteMessages(request.session_id, tuple(request.seqs)),
        )
        return convert.delete_messages_response(out.value)

    async def ClearSession(
        self, request: mpb.ClearSessionRequest, call: Call
    ) -> mpb.ClearSessionResponse:
        out = await self._door.run(
            ops_state.CLEAR_SESSION,
            call,
            request.agent_id,
            lambda: ClearRequest(request.session_id, request.fixed_zone),
        )
        return mpb.ClearSessionResponse(deleted=out.value)

    async def GetSessionAttachment(
        self, request: mpb.GetSessionAttachmentRequest, call: Call
    ) -> mpb.GetSessionAttachmentResponse:
        out = await self._door.run(
            ops_state.GET_SESSION_ATTACHMENT,
            call,
            request.agent_id,
            lambda: convert.attachment_query_from(request),
        )
        return convert.attachment_response(out.value)
