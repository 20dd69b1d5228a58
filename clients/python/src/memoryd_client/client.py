"""The synchronous memoryd client: a gRPC channel plus typed helpers for common calls.

Helpers return the protobuf messages of ``memoryd_proto.v1``; anything without a
helper is one call away on the raw stubs ``.memory``, ``.snapshot`` and ``.lifecycle``
(use :meth:`MemorydClient.call` to get the same timeout, metadata and error mapping).
"""

from __future__ import annotations

import builtins
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from types import TracebackType
from typing import Any, Self

import grpc
from grpc_health.v1 import health_pb2, health_pb2_grpc

from memoryd_client import requests as rq
from memoryd_client.errors import from_rpc_error
from memoryd_client.target import parse_target
from memoryd_proto.v1 import (
    common_pb2,
    lifecycle_service_pb2_grpc,
    memory_service_pb2,
    memory_service_pb2_grpc,
    snapshot_service_pb2_grpc,
)

DEFAULT_TIMEOUT = 10.0
Metadata = Sequence[tuple[str, str | bytes]]


def _stub(factory: Callable[[grpc.Channel], Any], channel: grpc.Channel) -> Any:
    """A generated stub (the generated ``*_grpc`` modules are untyped)."""
    return factory(channel)


class MemorydClient:
    """A connection to one memoryd daemon.

    >>> with MemorydClient("127.0.0.1:50051") as client:  # doctest: +SKIP
    ...     client.remember("demo", "The user prefers dark mode", tags=["ui"])
    ...     hits = client.recall("demo", "which theme does the user like?")

    ``target`` is anything :func:`memoryd_client.parse_target` accepts; ``None`` means
    ``$MEMORYD_ADDRESS`` or ``127.0.0.1:50051``. ``timeout`` (seconds) applies to every
    call; ``metadata`` is sent with every call (e.g. credentials). Failed calls raise
    :class:`memoryd_client.MemorydError`.
    """

    def __init__(
        self,
        target: str | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT,
        metadata: Metadata = (),
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self.target = parse_target(target)
        self.timeout = timeout
        self.metadata: tuple[tuple[str, str | bytes], ...] = tuple(metadata)
        self._channel: grpc.Channel = grpc.insecure_channel(self.target, options=list(options))
        #: Raw ``memoryd.v1.MemoryService`` stub.
        self.memory: Any = _stub(memory_service_pb2_grpc.MemoryServiceStub, self._channel)
        #: Raw ``memoryd.v1.SnapshotService`` stub.
        self.snapshot: Any = _stub(snapshot_service_pb2_grpc.SnapshotServiceStub, self._channel)
        #: Raw ``memoryd.v1.LifecycleService`` stub.
        self.lifecycle: Any = _stub(lifecycle_service_pb2_grpc.LifecycleServiceStub, self._channel)
        self._health: Any = _stub(health_pb2_grpc.HealthStub, self._channel)

    # ------------------------------------------------------------------ lifecycle

    @property
    def channel(self) -> grpc.Channel:
        """The underlying :class:`grpc.Channel`."""
        return self._channel

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"MemorydClient(target={self.target!r})"

    def call(
        self, method: Callable[..., Any], request: Any, *, timeout: float | None = None
    ) -> Any:
        """Invoke a unary stub method with this client's timeout and metadata.

        ``client.call(client.lifecycle.GetStats, GetStatsRequest(agent_id="a"))``
        """
        try:
            return method(
                request,
                timeout=self.timeout if timeout is None else timeout,
                metadata=self.metadata or None,
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from None

    # ------------------------------------------------------------------ long-term memory

    def remember(
        self,
        agent_id: str,
        content: str,
        *,
        memory_type: rq.EnumArg = "fact",
        tags: rq.StrSeq = (),
        importance: float | None = None,
        namespace: str = "",
        metadata: Mapping[str, Any] | None = None,
        security_level: rq.EnumArg | None = None,
        embedding: Sequence[float] | None = None,
    ) -> common_pb2.Memory:
        """Store one memory; returns the stored ``Memory`` (an existing one when deduplicated)."""
        request = rq.remember_request(
            agent_id,
            content,
            memory_type=memory_type,
            tags=tags,
            importance=importance,
            namespace=namespace,
            metadata=metadata,
            security_level=security_level,
            embedding=embedding,
        )
        response: memory_service_pb2.RememberResponse = self.call(self.memory.Remember, request)
        return response.memory

    def remember_batch(
        self, agent_id: str, items: Iterable[rq.BatchItem]
    ) -> builtins.list[memory_service_pb2.RememberResult]:
        """Store many memories in one durable write; returns ``RememberResult``s in order.

        Items are contents, dicts with ``remember``'s keyword names, or ``RememberRequest``s.
        """
        request = rq.remember_batch_request(agent_id, items)
        response: memory_service_pb2.RememberBatchResponse = self.call(
            self.memory.RememberBatch, request
        )
        return builtins.list(response.results)

    def recall(
        self,
        agent_id: str,
        query: str,
        *,
        limit: int = 10,
        namespace: str | None = None,
        tags: rq.StrSeq = (),
        memory_types: Iterable[rq.EnumArg] = (),
        scoring: rq.ScoringArg | None = None,
        query_embedding: Sequence[float] | None = None,
    ) -> builtins.list[memory_service_pb2.RecallResult]:
        """The best matches for ``query``, best first, as ``RecallResult``s (score + memory).

        ``scoring`` is ``"similarity"``, ``"decayed"``, ``"weighted"`` or a ``Scoring``.
        """
        request = rq.recall_request(
            agent_id,
            query,
            limit=limit,
            namespace=namespace,
            tags=tags,
            memory_types=memory_types,
            scoring=scoring,
            query_embedding=query_embedding,
        )
        response: memory_service_pb2.RecallResponse = self.call(self.memory.Recall, request)
        return builtins.list(response.results)

    def get(self, agent_id: str, id: str) -> common_pb2.Memory:
        """One ``Memory`` by id; raises ``NotFoundError`` when there is none."""
        response: memory_service_pb2.GetMemoryResponse = self.call(
            self.memory.GetMemory, rq.get_request(agent_id, id)
        )
        return response.memory

    def list(
        self,
        agent_id: str,
        *,
        page_size: int = 50,
        page_token: str = "",
        namespace: str | None = None,
        tags: rq.StrSeq = (),
        memory_types: Iterable[rq.EnumArg] = (),
    ) -> tuple[builtins.list[common_pb2.Memory], str]:
        """One page of memories, newest first, and the next page's token ("" at the end)."""
        request = rq.list_request(
            agent_id,
            page_size=page_size,
            page_token=page_token,
            namespace=namespace,
            tags=tags,
            memory_types=memory_types,
        )
        response: memory_service_pb2.ListMemoriesResponse = self.call(
            self.memory.ListMemories, request
        )
        return builtins.list(response.memories), response.next_page_token

    def iter_memories(
        self,
        agent_id: str,
        *,
        page_size: int = 50,
        namespace: str | None = None,
        tags: rq.StrSeq = (),
        memory_types: Iterable[rq.EnumArg] = (),
    ) -> Iterator[common_pb2.Memory]:
        """Every memory, newest first, following page tokens."""
        types = builtins.list(memory_types)
        token = ""
        while True:
            memories, token = self.list(
                agent_id,
                page_size=page_size,
                page_token=token,
                namespace=namespace,
                tags=tags,
                memory_types=types,
            )
            yield from memories
            if not token:
                return

    def forget(self, agent_id: str, ids: rq.StrSeq) -> builtins.list[str]:
        """Delete memories; returns the ids that existed and were deleted."""
        response: memory_service_pb2.ForgetMemoriesResponse = self.call(
            self.memory.ForgetMemories, rq.forget_request(agent_id, ids)
        )
        return builtins.list(response.forgotten_ids)

    # ------------------------------------------------------------------ health

    def health(self, service: str = "") -> str:
        """grpc.health.v1 status name: ``"SERVING"``, ``"NOT_SERVING"``, ...

        ``service=""`` is the whole daemon; ``"memoryd.v1.MemoryService"`` one service.
        """
        response = self.call(self._health.Check, health_pb2.HealthCheckRequest(service=service))
        name: str = health_pb2.HealthCheckResponse.ServingStatus.Name(response.status)
        return name
