"""How memoryd's MCP server fails a request, in one table.

A tool call that fails for a reason the caller can act on is a *tool result* with
``isError`` (a bad argument naming the field, a denial, a missing record: the model
reads it and corrects itself). Everything else is a JSON-RPC error:

| failure                                  | JSON-RPC code | ``data``                    |
|------------------------------------------|---------------|-----------------------------|
| a bad parameter (INVALID_ARGUMENT), an   | -32602        | ``status``, ``fields``      |
| unknown prompt or tool                   | (Invalid params, as the spec's examples) |  |
| an unknown resource, or a NOT_FOUND      | -32002        | ``status``, ``uri``         |
|                                          | (the spec's "Resource not found")        |  |
| any other memoryd status (a denial, ...) | the gRPC status number: PERMISSION_DENIED 7, UNAUTHENTICATED 16, RESOURCE_EXHAUSTED 8, FAILED_PRECONDITION 9, UNAVAILABLE 14, ... (application codes, outside JSON-RPC's reserved range) | ``status`` |
| a fault of the server                    | -32603        | ``status`` INTERNAL         |

Never code 0, and an expected failure is not logged as an exception: the SDK logs
(and prints, on the stdio bridge) only what is not an ``MCPError``.
"""

from __future__ import annotations

from collections.abc import Mapping

from mcp.shared.exceptions import MCPError

from memoryd_client.tool_table import ToolArgumentError

INVALID_PARAMS = -32602
#: The MCP specification's code for a resource that does not exist.
RESOURCE_NOT_FOUND = -32002
INTERNAL_ERROR = -32603

#: memoryd status -> the JSON-RPC code of a failed request that is not a tool call.
JSONRPC_CODES: Mapping[str, int] = {
    "INVALID_ARGUMENT": INVALID_PARAMS,
    "NOT_FOUND": RESOURCE_NOT_FOUND,
    "DEADLINE_EXCEEDED": 4,
    "ALREADY_EXISTS": 6,
    "PERMISSION_DENIED": 7,
    "RESOURCE_EXHAUSTED": 8,
    "FAILED_PRECONDITION": 9,
    "ABORTED": 10,
    "OUT_OF_RANGE": 11,
    "UNIMPLEMENTED": 12,
    "UNAVAILABLE": 14,
    "UNAUTHENTICATED": 16,
    "INTERNAL": INTERNAL_ERROR,
}


class ToolFailure(Exception):
    """A tool call that failed for a reason the caller can act on."""

    def __init__(self, code: str, message: str, fields: Mapping[str, str] | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.fields = dict(fields or {})


def jsonrpc_error(failure: ToolFailure | ToolArgumentError, *, uri: str = "") -> MCPError:
    """The JSON-RPC error a failed resource read or prompt answers (see the table)."""
    if isinstance(failure, ToolArgumentError):
        fields = {failure.field: failure.reason} if failure.field else {}
        return invalid_params(f"invalid argument: {failure}", fields)
    code = JSONRPC_CODES.get(failure.code, INTERNAL_ERROR)
    data: dict[str, object] = {"status": failure.code if code != INTERNAL_ERROR else "INTERNAL"}
    if failure.fields:
        data["fields"] = dict(failure.fields)
    if code == RESOURCE_NOT_FOUND and uri:
        data["uri"] = uri
    message = failure.message if code != INTERNAL_ERROR else "Internal error"
    return MCPError(code, message, data)


def invalid_params(message: str, fields: Mapping[str, str] | None = None) -> MCPError:
    data: dict[str, object] = {"status": "INVALID_ARGUMENT"}
    if fields:
        data["fields"] = dict(fields)
    return MCPError(INVALID_PARAMS, message, data)
