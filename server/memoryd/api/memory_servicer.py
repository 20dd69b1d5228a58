"""MemoryService servicer: validate -> convert -> call the service -> convert back."""

from __future__ import annotations

from typing import Any, TypeAlias

import grpc

from memoryd.api import convert
from memoryd.api.context import call_scope
from memoryd.domain.errors import Unimplemented
from memoryd.domain.requests import Degradation
from memoryd.resilience.degradation import ComponentStates, collecting
from memoryd.service.keyed import KeyedMemoryService
from memoryd.service.memory import MemoryService
from memoryd.service.profile import ProfileService
from memoryd.service.sessions import SessionService
from memoryd.service.working import WorkingMemoryService
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

Ctx: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


class MemoryServicer(mgrpc.MemoryServiceServicer):
    def __init__(
        self,
        service: MemoryService,
        *,
        keyed: KeyedMemoryService | None = None,
        working: WorkingMemoryService | None = None,
        profiles: ProfileService | None = None,
        sessions: SessionService | None = None,
        states: ComponentStates | None = None,
    ) -> None:
        self._states = states
        self._service = service
        self._keyed_service = keyed
        self._working_service = working
        self._profile_service = profiles
        self._session_service = sessions

    def _degraded(self, found: list[Degradation], *already: Degradation) -> list[Degradation]:
        """What this call fell back on, plus a store that is down (writes wait in
        the log, reads overlay it): such writes are applied by a background task."""
        out = [*already]
        ambient = self._states.impaired("store") if self._states is not None else []
        for item in (*found, *ambient):
            if not any(d.component == item.component for d in out):
                out.append(item)
        return out

    def _keyed(self) -> KeyedMemoryService:
        if self._keyed_service is None:
            raise Unimplemented("keyed memory is not enabled in this server")
        return self._keyed_service

    def _working(self) -> WorkingMemoryService:
        if self._working_service is None:
            raise Unimplemented("working memory is not enabled in this server")
        return self._working_service

    def _profiles(self) -> ProfileService:
        if self._profile_service is None:
            raise Unimplemented("agent profiles are not enabled in this server")
        return self._profile_service

    def _sessions(self) -> SessionService:
        if self._session_service is None:
            raise Unimplemented("sessions are not enabled in this server")
        return self._session_service

    async def Remember(self, request: mpb.RememberRequest, context: Ctx) -> mpb.RememberResponse:
        scope = call_scope(request.agent_id)
        with collecting() as found:
            outcome = await self._service.remember(scope, convert.draft_from(request))
        resp = convert.remember_response(outcome)
        resp.degraded.extend(convert.degraded_to_proto(self._degraded(found)))
        return resp

    async def RememberBatch(
        self, request: mpb.RememberBatchRequest, context: Ctx
    ) -> mpb.RememberBatchResponse:
        scope = call_scope(request.agent_id)
        with collecting() as found:
            outcomes = await self._service.remember_batch(scope, convert.batch_drafts_from(request))
        resp = convert.remember_batch_response(outcomes)
        resp.degraded.extend(convert.degraded_to_proto(self._degraded(found)))
        return resp

    async def Recall(self, request: mpb.RecallRequest, context: Ctx) -> mpb.RecallResponse:
        scope = call_scope(request.agent_id)
        query = convert.recall_query_from(request)
        with collecting() as found:
            outcome = await self._service.recall(scope, query)
        resp = convert.recall_response(outcome)
        del resp.degraded[:]
        resp.degraded.extend(convert.degraded_to_proto(self._degraded(found, *outcome.degraded)))
        return resp

    async def GetMemory(self, request: mpb.GetMemoryRequest, context: Ctx) -> mpb.GetMemoryResponse:
        scope = call_scope(request.agent_id)
        memory = await self._service.get(scope, request.id)
        return mpb.GetMemoryResponse(memory=convert.memory_to_proto(memory))

    async def ListMemories(
        self, request: mpb.ListMemoriesRequest, context: Ctx
    ) -> mpb.ListMemoriesResponse:
        scope = call_scope(request.agent_id)
        page = await self._service.list_memories(scope, convert.list_query_from(request))
        return convert.list_response(page)

    async def UpdateMemory(
        self, request: mpb.UpdateMemoryRequest, context: Ctx
    ) -> mpb.UpdateMemoryResponse:
        scope = call_scope(request.agent_id)
        patch = convert.patch_from(request)
        memory = await self._service.update(scope, request.memory.id, patch)
        return mpb.UpdateMemoryResponse(memory=convert.memory_to_proto(memory))

    async def ForgetMemories(
        self, request: mpb.ForgetMemoriesRequest, context: Ctx
    ) -> mpb.ForgetMemoriesResponse:
        scope = call_scope(request.agent_id)
        forgotten = await self._service.forget(scope, list(request.ids))
        return mpb.ForgetMemoriesResponse(forgotten_ids=forgotten)

    async def SetMemory(self, request: mpb.SetMemoryRequest, context: Ctx) -> mpb.SetMemoryResponse:
        scope = call_scope(request.agent_id)
        with collecting() as found:
            entry = await self._keyed().set(scope, convert.key_write_from(request))
        resp = convert.set_memory_response(entry)
        resp.degraded.extend(convert.degraded_to_proto(self._degraded(found)))
        return resp

    async def GetKey(self, request: mpb.GetKeyRequest, context: Ctx) -> mpb.GetKeyResponse:
        scope = call_scope(request.agent_id)
        return convert.get_key_response(await self._keyed().get(scope, request.key))

    async def ListKeys(self, request: mpb.ListKeysRequest, context: Ctx) -> mpb.ListKeysResponse:
        scope = call_scope(request.agent_id)
        listing = await self._keyed().list(scope, convert.key_list_query_from(request))
        return convert.list_keys_response(listing)

    async def KeyHistory(
        self, request: mpb.KeyHistoryRequest, context: Ctx
    ) -> mpb.KeyHistoryResponse:
        scope = call_scope(request.agent_id)
        page = await self._keyed().history(scope, convert.key_history_query_from(request))
        return convert.key_history_response(page)

    # ------------------------------------------------------------ working memory

    async def SetWorkingMemory(
        self, request: mpb.SetWorkingMemoryRequest, context: Ctx
    ) -> mpb.SetWorkingMemoryResponse:
        scope = call_scope(request.agent_id)
        wm = await self._working().set(scope, convert.working_write_from(request))
        return mpb.SetWorkingMemoryResponse(working_memory=convert.working_memory_to_proto(wm))

    async def GetWorkingMemory(
        self, request: mpb.GetWorkingMemoryRequest, context: Ctx
    ) -> mpb.GetWorkingMemoryResponse:
        scope = call_scope(request.agent_id)
        wm = await self._working().get(scope, convert.working_scope_from(request.scope))
        return mpb.GetWorkingMemoryResponse(working_memory=convert.working_memory_to_proto(wm))

    async def DeleteWorkingMemory(
        self, request: mpb.DeleteWorkingMemoryRequest, context: Ctx
    ) -> mpb.DeleteWorkingMemoryResponse:
        scope = call_scope(request.agent_id)
        deleted = await self._working().delete(scope, convert.working_scope_from(request.scope))
        return mpb.DeleteWorkingMemoryResponse(deleted=deleted)

    async def ListWorkingMemoryScopes(
        self, request: mpb.ListWorkingMemoryScopesRequest, context: Ctx
    ) -> mpb.ListWorkingMemoryScopesResponse:
        scope = call_scope(request.agent_id)
        page = await self._working().list_scopes(scope, convert.working_scope_query_from(request))
        return convert.list_scopes_response(page)

    # ------------------------------------------------------------ profile

    async def GetProfile(
        self, request: mpb.GetProfileRequest, context: Ctx
    ) -> mpb.GetProfileResponse:
        scope = call_scope(request.agent_id)
        profile = await self._profiles().get(scope)
        return mpb.GetProfileResponse(profile=convert.profile_to_proto(profile))

    async def SetProfile(
        self, request: mpb.SetProfileRequest, context: Ctx
    ) -> mpb.SetProfileResponse:
        scope = call_scope(request.agent_id)
        profile = await self._profiles().set(scope, request.content, request.if_match)
        return mpb.SetProfileResponse(profile=convert.profile_to_proto(profile))

    # ------------------------------------------------------------ sessions

    async def AppendMessages(
        self, request: mpb.AppendMessagesRequest, context: Ctx
    ) -> mpb.AppendMessagesResponse:
        scope = call_scope(request.agent_id)
        outcome = await self._sessions().append(
            scope,
            request.session_id,
            convert.message_drafts_from(request),
            convert.append_ttl_from(request),
            convert.append_compression_from(request),
        )
        return convert.append_response(outcome)

    async def GetSessionWindow(
        self, request: mpb.GetSessionWindowRequest, context: Ctx
    ) -> mpb.GetSessionWindowResponse:
        scope = call_scope(request.agent_id)
        window = await self._sessions().window(
            scope, request.session_id, request.token_budget or None
        )
        return convert.window_response(window)

    async def InjectInstruction(
        self, request: mpb.InjectInstructionRequest, context: Ctx
    ) -> mpb.InjectInstructionResponse:
        scope = call_scope(request.agent_id)
        zone = await self._sessions().inject(
            scope, request.session_id, convert.fixed_zone_kind_from(request), request.content
        )
        return convert.inject_response(zone)

    async def EndSession(
        self, request: mpb.EndSessionRequest, context: Ctx
    ) -> mpb.EndSessionResponse:
        scope = call_scope(request.agent_id)
        outcome = await self._sessions().end(
            scope, request.session_id, extract=request.extract_memories
        )
        return convert.end_session_response(outcome)

    async def GetSessionMessages(
        self, request: mpb.GetSessionMessagesRequest, context: Ctx
    ) -> mpb.GetSessionMessagesResponse:
        scope = call_scope(request.agent_id)
        page = await self._sessions().messages(scope, convert.messages_query_from(request))
        return convert.messages_response(page)

    async def DeleteMessages(
        self, request: mpb.DeleteMessagesRequest, context: Ctx
    ) -> mpb.DeleteMessagesResponse:
        scope = call_scope(request.agent_id)
        outcome = await self._sessions().delete_messages(
            scope, request.session_id, list(request.seqs)
        )
        return convert.delete_messages_response(outcome)

    async def ClearSession(
        self, request: mpb.ClearSessionRequest, context: Ctx
    ) -> mpb.ClearSessionResponse:
        scope = call_scope(request.agent_id)
        deleted = await self._sessions().clear(
            scope, request.session_id, fixed_zone=request.fixed_zone
        )
        return mpb.ClearSessionResponse(deleted=deleted)
