"""The transport-neutral operation layer: the only door to the services.

Each operation is defined once (definition.py: its name, required role, audit fields,
typed input, result and degradations) in one module per area; :class:`Door` runs one
for a transport's :class:`Call`. The gRPC servicers (memoryd.api) and the MCP tools
(memoryd.mcp) are thin translations onto it: wire format in, operation, wire format
out. Protobuf never reaches this package.
"""

from typing import Any

from memoryd.operations import agent_state, changes, keyed, lifecycle, memories, snapshot
from memoryd.operations.call import Call, Outcome
from memoryd.operations.definition import Operation, StreamOperation
from memoryd.operations.door import Door
from memoryd.operations.services import Services

#: Every operation, in the order of the services' RPCs.
OPERATIONS: tuple[Operation[Any, Any] | StreamOperation[Any, Any], ...] = (
    *memories.OPERATIONS,
    *keyed.OPERATIONS,
    *agent_state.OPERATIONS,
    *changes.OPERATIONS,
    *snapshot.OPERATIONS,
    *lifecycle.OPERATIONS,
)

__all__ = ["OPERATIONS", "Call", "Door", "Operation", "Outcome", "Services", "StreamOperation"]
