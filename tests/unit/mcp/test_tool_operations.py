"""Each MCP tool declares the operations it runs (the role a call needs is theirs), and
the tool table's hints agree with those operations' declared effects."""

from __future__ import annotations

import pytest

from memoryd.config import SidecarSettings
from memoryd.domain.principal import Role
from memoryd.mcp.server import McpRequest
from memoryd.mcp.tools import TOOL_OPERATIONS, DoorTools
from memoryd.operations import OPERATIONS, Door, Services
from memoryd.operations import lifecycle as lifecycle_ops
from memoryd.operations import memories as memory_ops
from memoryd.operations.auth import SidecarAuthenticator
from memoryd.operations.definition import Effect
from memoryd_client.tool_specs_erasure import ERASURE_TOOLS
from memoryd_client.tool_table import MCP_TOOLS, TOOLS
from tests.unit.service.helpers import Harness, harness  # noqa: F401 (fixture)

SIDECAR = SidecarAuthenticator(SidecarSettings(tenant_id="acme", agents=["*"]))


def test_every_tool_declares_operations_of_the_table() -> None:
    assert set(TOOL_OPERATIONS) == set(MCP_TOOLS)
    assert all(ops and set(ops) <= set(OPERATIONS) for ops in TOOL_OPERATIONS.values())


@pytest.mark.parametrize("name", sorted(MCP_TOOLS))
def test_read_only_hints_follow_the_effects(name: str) -> None:
    effects = {op.effect for op in TOOL_OPERATIONS[name]}
    # VerifyErasure changes nothing: a scan whose effect is admin's (it reads files
    # every agent's data is in).
    reads = effects == {Effect.READ} or TOOL_OPERATIONS[name] == (lifecycle_ops.VERIFY_ERASURE,)
    assert TOOLS[name].read_only is reads, (name, effects)
    # No MCP tool runs an operation that needs admin but the erasure tools.
    if name in ERASURE_TOOLS:
        assert all(op.required_role(None) is Role.ADMIN for op in TOOL_OPERATIONS[name])
        assert "admin" in TOOLS[name].description.lower()
    else:
        assert effects <= {Effect.READ, Effect.WRITE}, (name, effects)


async def test_a_tool_running_an_undeclared_operation_fails(
    harness: Harness,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    tools = DoorTools(Door(Services(memories=harness.service), SIDECAR), "a1")
    monkeypatch.setitem(TOOL_OPERATIONS, "recall", (memory_ops.GET_MEMORY,))
    with pytest.raises(RuntimeError, match="not in TOOL_OPERATIONS"):
        await tools.call("recall", {"query": "tea"}, McpRequest())
