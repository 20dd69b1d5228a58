"""The operation matrix, generated from the operation table: every operation served over
gRPC and every MCP tool, resource and prompt, called by an admin, a writer, a reader, a
low-clearance reader, a low-clearance admin and another tenant's admin on an agent an
admin seeded with an email and a phone number in every kind of record.

For each call: allowed or PERMISSION_DENIED exactly as the operation's declared effect
says; for the low-clearance callers no email or phone number anywhere in the answer
(and placeholders wherever the admin's answer shows them), except the admin's Export
(a backup), and nothing of a restricted memory and key the admin wrote and deleted
(not their ids, not the key's path: not even that they existed, which the change
feed's deletions would tell); for the other tenant nothing of the seeded agent. An operation without a
case fails the coverage checks, so one added later cannot go untested.

One daemon (real gRPC, MCP over Streamable HTTP) for the module; reads run on one
shared seeded agent, each write on an agent of its own seeded for the case.
"""

from __future__ import annotations

import asyncio
import json
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import grpc
import pytest

from memoryd.api.roles import OPERATIONS_BY_NAME
from memoryd.domain.principal import Role
from memoryd.mcp.tools import TOOL_OPERATIONS
from memoryd.operations.definition import Effect
from memoryd_client.tool_table import MCP_TOOLS
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from tests.conftest import Daemon
from tests.mcp.support import http_client, mcp_url
from tests.security import matrix_mcp
from tests.security.matrix_grpc import CASES as GRPC_CASES
from tests.security.matrix_grpc import GrpcCase
from tests.security.matrix_mcp import BACKING_TOOLS, McpCase
from tests.security.matrix_mcp import CASES as MCP_CASES
from tests.security.matrix_seed import (
    ADMIN,
    EMAIL,
    EVIDENCE,
    LOW_READER,
    MASKED,
    OTHER,
    PRINCIPALS,
    RAW,
    RPCS,
    Seeded,
    config,
    rendered,
    seed,
    seed_deleted_above,
    shows_masked,
    shows_raw,
)
from tests.security.support import KeySpec, api_key_config, invoke, write_config

OTHER_TENANT_CODES = {"OK", "NOT_FOUND", "INVALID_ARGUMENT"}


@dataclass
class Result:
    code: str
    #: What the call answered: its responses, or its error (message and fields).
    text: str
    #: What the caller sent (an answer may repeat it: a key it asked for).
    sent: str = ""


@dataclass
class Matrix:
    daemon: Daemon
    channel: grpc.Channel
    url: str
    shared: Seeded
    #: Every memory id seeded in the admin's tenant.
    seeded_ids: set[str] = field(default_factory=set)
    #: What the admin wrote above the masked callers' clearance and deleted.
    hidden: tuple[str, ...] = ()

    def agent(
        self, name: str, key: KeySpec, role: Role, writes: bool, seeds: frozenset[str]
    ) -> Seeded:
        """Where ``key`` runs a case: the shared agent for reads, for a write its role
        denies (the denial is checked on real data) and for the other tenant (its own
        partition of that name), else an agent seeded for the case."""
        if not writes or key is OTHER or role.value not in key.roles:
            return self.shared
        agent = f"{re.sub(r'[^a-z0-9]+', '-', name.lower()).strip('-')}-{key.name}"
        seeded = seed(self.channel, agent, seeds)
        self.seeded_ids.update(seeded.memory_ids)
        return seeded


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Matrix]:
    root = tmp_path_factory.mktemp("matrix")
    settings = api_key_config(list(PRINCIPALS), **config())
    daemon = Daemon(data_dir=root / "data", config_file=write_config(root / "m.yaml", settings))
    daemon.start()
    channel = grpc.insecure_channel(daemon.address)
    try:
        shared = seed(channel, "shared")
        hidden = seed_deleted_above(channel, "shared")
        yield Matrix(daemon, channel, mcp_url(daemon), shared, set(shared.memory_ids), hidden)
    finally:
        channel.close()
        daemon.kill()


# ---------------------------------------------------------------- coverage


def test_every_operation_has_a_case() -> None:
    """Every operation registered for gRPC has a case; one whose effect depends on its
    input has a case per input, each saying which input it is."""
    assert {c.op for c in GRPC_CASES} == set(OPERATIONS_BY_NAME), "operations without a case"
    for case in GRPC_CASES:
        op = OPERATIONS_BY_NAME[case.op]
        if op.effect_of is not None:
            assert case.value is not None, f"{case.id}: the effect depends on the input"
    effects = {OPERATIONS_BY_NAME[c.op].effect_for(c.value) for c in GRPC_CASES}
    assert effects == set(Effect)


def test_every_mcp_tool_resource_and_prompt_has_a_case() -> None:
    assert set(TOOL_OPERATIONS) == set(MCP_TOOLS)
    assert {c.name for c in MCP_CASES} == set(MCP_TOOLS) | set(BACKING_TOOLS)
    for case in MCP_CASES:
        declared = {op.name for op in TOOL_OPERATIONS[case.tool]}
        assert set(case.ops) <= declared, case.id
    covered = {name for c in MCP_CASES for name in c.ops}
    assert covered == {op.name for ops in TOOL_OPERATIONS.values() for op in ops}


# ---------------------------------------------------------------- gRPC


def _grpc(matrix: Matrix, case: GrpcCase, key: KeySpec, seeded: Seeded) -> Result:
    op = OPERATIONS_BY_NAME[case.op]
    request = case.request(seeded)
    out = invoke(matrix.channel, RPCS[op.name], request, key.metadata)
    error = out.message + "".join(f for v in out.violations for f in v)
    sent = rendered(request if isinstance(request, Sequence) else [request])
    return Result(out.code.name, rendered(out.responses) + error, sent)


@pytest.fixture(scope="module")
def grpc_results(matrix: Matrix) -> dict[str, dict[str, Result]]:
    plans = []
    for case in GRPC_CASES:
        op = OPERATIONS_BY_NAME[case.op]
        # An operation whose own effect is a read (Export) reads, whatever role an
        # input makes it need.
        role, writes = op.required_role(case.value), op.effect is not Effect.READ
        for key in PRINCIPALS:
            plans.append((case, key, matrix.agent(case.id, key, role, writes, case.seeds)))
    results: dict[str, dict[str, Result]] = {}
    for case, key, seeded in plans:
        results.setdefault(case.id, {})[key.name] = _grpc(matrix, case, key, seeded)
    return results


@pytest.mark.parametrize("case", GRPC_CASES, ids=lambda c: c.id)
def test_grpc(case: GrpcCase, matrix: Matrix, grpc_results: dict[str, dict[str, Result]]) -> None:
    op = OPERATIONS_BY_NAME[case.op]
    check(
        grpc_results[case.id],
        op.required_role(case.value),
        shows_pii=case.shows_pii,
        unmasked_for_admin=op.unmasked_for_admin,
        seeded_ids=matrix.seeded_ids,
        hidden=matrix.hidden,
        highest_clearance=case.highest_clearance,
    )


# ---------------------------------------------------------------- MCP


def _mcp_role(case: McpCase) -> Role:
    roles = [OPERATIONS_BY_NAME[name].required_role(None) for name in case.ops]
    return Role.ADMIN if Role.ADMIN in roles else Role.WRITE if Role.WRITE in roles else Role.READ


async def _run_mcp(matrix: Matrix, plans: list[tuple[McpCase, KeySpec, Seeded]]) -> Any:
    results: dict[str, dict[str, Result]] = {}
    for key in PRINCIPALS:
        async with http_client(matrix.url, key.raw) as client:
            for case, who, seeded in plans:
                if who is key:
                    code, text = await matrix_mcp.run(client, case, seeded)
                    sent = json.dumps(case.arguments(seeded), ensure_ascii=False)
                    results.setdefault(case.id, {})[key.name] = Result(code, text, sent)
    return results


@pytest.fixture(scope="module")
def mcp_results(matrix: Matrix) -> dict[str, dict[str, Result]]:
    plans = []
    for case in MCP_CASES:
        role = _mcp_role(case)
        for key in PRINCIPALS:
            writes = role is not Role.READ
            plans.append((case, key, matrix.agent(case.id, key, role, writes, case.seeds)))
    return asyncio.run(_run_mcp(matrix, plans))  # type: ignore[no-any-return]


@pytest.mark.parametrize("case", MCP_CASES, ids=lambda c: c.id)
def test_mcp(case: McpCase, matrix: Matrix, mcp_results: dict[str, dict[str, Result]]) -> None:
    results = mcp_results[case.id]
    if case.edits_masked_file:  # refused for the masked callers whatever their roles
        for key in MASKED:
            assert results[key.name].code == "PERMISSION_DENIED", results[key.name]
            assert not shows_raw(results[key.name].text)
        results = {k: r for k, r in results.items() if k not in {m.name for m in MASKED}}
    check(
        results,
        _mcp_role(case),
        shows_pii=case.shows_pii,
        unmasked_for_admin=False,
        seeded_ids=matrix.seeded_ids,
        hidden=matrix.hidden,
    )


# ---------------------------------------------------------------- the checks


def check(
    results: dict[str, Result],
    role: Role,
    *,
    shows_pii: bool,
    unmasked_for_admin: bool,
    seeded_ids: set[str],
    hidden: tuple[str, ...],
    highest_clearance: bool = False,
) -> None:
    """One case's outcomes for every principal, against what its effect allows."""
    for key in PRINCIPALS:
        if key.name not in results:
            continue
        got = results[key.name]
        assert got.code != "INTERNAL", (key.name, got)
        if role.value not in key.roles:
            assert got.code == "PERMISSION_DENIED", (key.name, role, got)
        elif highest_clearance and key in MASKED:
            assert got.code == "PERMISSION_DENIED", (key.name, "below the highest clearance", got)
        elif key is OTHER:
            assert got.code in OTHER_TENANT_CODES, (key.name, got)
        else:
            assert got.code == "OK", (key.name, got)
    admin = results[ADMIN.name]
    if shows_pii:  # the case reaches the seeded (or its own written) personal data
        assert shows_raw(admin.text), admin.text[:2000]
    for key in MASKED:
        got = results.get(key.name)
        if got is None:
            continue
        if unmasked_for_admin and "admin" in key.roles and got.code == "OK":
            assert shows_raw(got.text) == shows_raw(admin.text)  # a backup: as stored
            continue
        leaked = [raw for raw in RAW if raw in got.text]
        assert not leaked, (key.name, leaked, _around(got.text, leaked[0]))
        # Above its clearance: not even that it existed (a deletion in the change feed).
        above = [h for h in hidden if h in got.text and h not in got.sent]
        assert not above, (key.name, "saw above its clearance", _around(got.text, above[0]))
        if got.code == "OK" and shows_raw(admin.text):
            assert shows_masked(got.text), (key.name, got.text[:2000])
    # Another tenant sees nothing of the seeded agent: no seeded text or memory id but
    # what it sent itself (a key or an id it asked for).
    other = results[OTHER.name]
    seen = [e for e in (*EVIDENCE, *seeded_ids) if e in other.text and e not in other.sent]
    assert not seen, ("another tenant saw", seen, _around(other.text, seen[0]))


def _around(text: str, needle: str) -> str:
    at = text.find(needle)
    return text[max(0, at - 300) : at + 300]


# ---------------------------------------------------------------- stored data


def test_stored_data_is_untouched(matrix: Matrix, grpc_results: Any, mcp_results: Any) -> None:
    """After every masked read, the admin's export of the shared agent still holds the
    personal data in every kind of record, and the low-clearance reader's export holds
    the same kinds of record, masked."""

    def kinds(key: KeySpec) -> dict[str, str]:
        out = invoke(
            matrix.channel,
            RPCS["LifecycleService.Export"],
            lpb.ExportRequest(agent_id="shared"),
            key.metadata,
        )
        assert out.ok, out.message
        found: dict[str, str] = {}
        for response in out.responses:
            if response.WhichOneof("event") == "record":  # type: ignore[attr-defined]
                record = response.record  # type: ignore[attr-defined]
                kind = record.WhichOneof("record")
                found[kind] = found.get(kind, "") + rendered([record])
        return found

    stored, masked = kinds(ADMIN), kinds(LOW_READER)
    every = {"memory", "key_event", "working_memory", "profile", "session", "state"}
    assert every <= set(stored) and set(masked) == set(stored)
    for kind in every:
        assert shows_raw(stored[kind]), kind
        assert not shows_raw(masked[kind]) and shows_masked(masked[kind]), kind
    assert EMAIL in stored["memory"]  # the seed is as written
