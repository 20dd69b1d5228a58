"""grpc.health.v1 with ``List``.

grpc-proto added ``List`` (a snapshot of every service's status) to the health
service; grpcio-health-checking's asyncio servicer (1.85) still answers it
UNIMPLEMENTED. This one keeps the names it was told about and answers ``List`` from
them; ``Check`` (what Kubernetes probes call) and ``Watch`` are the library's.
"""

from __future__ import annotations

from typing import Any

from grpc_health.v1 import health, health_pb2


class HealthServicer(health.aio.HealthServicer):  # type: ignore[misc]
    """The library's asyncio servicer plus ``List``."""

    def __init__(self) -> None:
        super().__init__()
        self._names: set[str] = {""}

    async def set(self, service: str, status: Any) -> None:
        """Set a service's status (see the library); the name is listed from now on."""
        self._names.add(service)
        await super().set(service, status)

    async def List(
        self, request: health_pb2.HealthListRequest, context: Any
    ) -> health_pb2.HealthListResponse:
        """Every known service with its status (NOT_SERVING for all once shutting down)."""
        response = health_pb2.HealthListResponse()
        for name in sorted(self._names):
            checked = await self.Check(health_pb2.HealthCheckRequest(service=name), context)
            response.statuses[name].status = checked.status
        return response
