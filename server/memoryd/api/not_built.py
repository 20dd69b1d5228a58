"""RPCs of the v1 contract that are not built yet answer UNIMPLEMENTED, saying so."""

from __future__ import annotations

from collections.abc import Callable, Coroutine
from typing import Any

from memoryd.domain.errors import Unimplemented

Handler = Callable[[Any, Any, Any], Coroutine[Any, Any, Any]]


def not_built(rpc: str, capability: str) -> Handler:
    async def handler(self: Any, request: Any, context: Any) -> Any:
        raise Unimplemented(f"{rpc} is not implemented yet: it arrives with {capability}")

    handler.__name__ = rpc.rsplit(".", 1)[-1]
    return handler


MEMORY_MODEL = "the memory-model work (keyed, working, profile and session memory)"
SNAPSHOT_LIFECYCLE = "the Snapshot and Lifecycle services work"
