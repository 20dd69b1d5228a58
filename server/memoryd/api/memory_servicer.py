"""MemoryService servicer: validate -> convert -> call the service -> convert back."""

from __future__ import annotations

from typing import Any, TypeAlias

import grpc

from memoryd.api import convert
from memoryd.api.context import call_scope
from memoryd.api.not_built import MEMORY_MODEL, not_built
from memoryd.domain.errors import Unimplemented
from memoryd.service.memory import MemoryService
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc

Ctx: TypeAlias = "grpc.aio.ServicerContext[Any, Any]"


class MemoryServicer(mgrpc.MemoryServiceServicer):
    def __init__(self, service: MemoryService) -> None:
        self._service = service

    async def Remember(self, request: mpb.RememberRequest, context: Ctx) -> mpb.RememberResponse:
        scope = call_scope(request.agent_id)
        outcome = await self._service.remember(scope, convert.draft_from(request))
        return convert.remember_response(outcome)

    async def RememberBatch(
        self, request: mpb.RememberBatchRequest, context: Ctx
    ) -> mpb.RememberBatchResponse:
        scope = call_scope(request.agent_id)
        outcomes = await self._service.remember_batch(scope, convert.batch_drafts_from(request))
        return convert.remember_batch_response(outcomes)

    async def Recall(self, request: mpb.RecallRequest, context: Ctx) -> mpb.RecallResponse:
        scope = call_scope(request.agent_id)
        query = convert.recall_query_from(request)
        if query.hybrid:
            raise Unimplemented(
                f"hybrid recall is not implemented yet: it arrives with {MEMORY_MODEL}"
            )
        return convert.recall_response(await self._service.recall(scope, query))

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

    SetMemory = not_built("MemoryService.SetMemory", MEMORY_MODEL)
    GetKey = not_built("MemoryService.GetKey", MEMORY_MODEL)
    ListKeys = not_built("MemoryService.ListKeys", MEMORY_MODEL)
    KeyHistory = not_built("MemoryService.KeyHistory", MEMORY_MODEL)
    SetWorkingMemory = not_built("MemoryService.SetWorkingMemory", MEMORY_MODEL)
    GetWorkingMemory = not_built("MemoryService.GetWorkingMemory", MEMORY_MODEL)
    DeleteWorkingMemory = not_built("MemoryService.DeleteWorkingMemory", MEMORY_MODEL)
    ListWorkingMemoryScopes = not_built("MemoryService.ListWorkingMemoryScopes", MEMORY_MODEL)
    GetProfile = not_built("MemoryService.GetProfile", MEMORY_MODEL)
    SetProfile = not_built("MemoryService.SetProfile", MEMORY_MODEL)
    AppendMessages = not_built("MemoryService.AppendMessages", MEMORY_MODEL)
    GetSessionWindow = not_built("MemoryService.GetSessionWindow", MEMORY_MODEL)
    InjectInstruction = not_built("MemoryService.InjectInstruction", MEMORY_MODEL)
    EndSession = not_built("MemoryService.EndSession", MEMORY_MODEL)
