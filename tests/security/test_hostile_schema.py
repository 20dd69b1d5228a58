"""A client JSON Schema cannot freeze the daemon (issue 20, finding 7), over a real
daemon with two tenants.

The hostile schema's pattern ``^(a+)+$`` against 40 "a"s and a "!" takes Python's
backtracking ``re`` about 2^40 steps (hours) with the event loop held. Another tenant
calls GetStats again and again, each with a deadline, for as long as the hostile call
is running: with the patterns on RE2 the hostile call is answered (the content does
not match) and every GetStats is served; before, the first GetStats after the hostile
call reached the loop missed its deadline. No timing is asserted: only that every
call is answered and how.
"""

from __future__ import annotations

import concurrent.futures
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.lifecycle_service_pb2_grpc import LifecycleServiceStub
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import Daemon
from tests.security.records import struct
from tests.security.support import KeySpec, api_key_config, write_config

HOSTILE = KeySpec("hostile-1f2e3d4c5b", "hostile", "mallory", "*", "internal", ("read", "write"))
BYSTANDER = KeySpec("bystander-9a8b7c6d", "bystander", "acme", "*", "internal", ("read",))
#: Generous: far beyond what a served call needs, far below a frozen loop's hours.
DEADLINE_S = 20.0


@pytest.fixture
def daemon(daemon_factory: Callable[..., Daemon], tmp_path: Path) -> Iterator[Daemon]:
    config = api_key_config([HOSTILE, BYSTANDER], maintenance={"enabled": False})
    d = daemon_factory(
        data_dir=tmp_path / "data", config_file=write_config(tmp_path / "c.yaml", config)
    )
    d.start()
    yield d
    d.kill()


def set_working(channel: grpc.Channel, content: dict[str, Any], schema: dict[str, Any]) -> Any:
    return MemoryServiceStub(channel).SetWorkingMemory(
        mpb.SetWorkingMemoryRequest(
            agent_id="a1",
            scope=pb.WorkingMemoryScope(thread_id="t1"),
            content=struct(content),
            json_schema=struct(schema),
        ),
        metadata=HOSTILE.metadata,
        timeout=60,
    )


def outcome(call: Callable[[], Any]) -> tuple[grpc.StatusCode, str]:
    try:
        call()
    except grpc.RpcError as error:
        return error.code(), error.details() or ""  # type: ignore[attr-defined]
    return grpc.StatusCode.OK, ""


def others_are_served_while(daemon: Daemon, hostile: Callable[[grpc.Channel], Any]) -> str:
    """Run ``hostile`` on its own channel; meanwhile the bystander tenant's GetStats
    must be answered, every time, until the hostile call is done. Its message."""
    with daemon.channel() as hostile_channel, daemon.channel() as channel:
        stats = LifecycleServiceStub(channel)
        with concurrent.futures.ThreadPoolExecutor(1) as pool:
            pending = pool.submit(outcome, lambda: hostile(hostile_channel))
            served = 0
            while served == 0 or not pending.done():
                answer = stats.GetStats(
                    lpb.GetStatsRequest(agent_id="b1"),
                    metadata=BYSTANDER.metadata,
                    timeout=DEADLINE_S,
                )
                assert answer.memories == 0
                served += 1
            code, message = pending.result()
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, message)
    return message


def test_a_catastrophic_pattern_is_evaluated_in_linear_time(daemon: Daemon) -> None:
    schema = {"properties": {"x": {"type": "string", "pattern": "^(a+)+$"}}}
    message = others_are_served_while(
        daemon, lambda ch: set_working(ch, {"x": "a" * 40 + "!"}, schema)
    )
    assert "content.$.x" in message and "does not match" in message
    # The same pattern, matching, is stored as usual.
    with daemon.channel() as channel:
        stored = set_working(channel, {"x": "a" * 40}, schema)
    assert stored.working_memory.version == 1


def test_a_pattern_re2_cannot_run_is_refused_naming_it(daemon: Daemon) -> None:
    schema = {"properties": {"x": {"type": "string", "pattern": "^(a)\\1$"}}}
    with daemon.channel() as channel:
        code, message = outcome(lambda: set_working(channel, {"x": "aa"}, schema))
    assert code == grpc.StatusCode.INVALID_ARGUMENT
    assert "json_schema.properties.x.pattern" in message and "RE2" in message


def test_validation_past_its_time_budget_is_refused(daemon: Daemon) -> None:
    # uniqueItems over ~5,000 objects: jsonschema compares every pair in Python
    # (~1.2e7 comparisons), far past the 250 ms budget on any machine.
    schema = {"properties": {"items": {"type": "array", "uniqueItems": True}}}
    content = {"items": [{"n": i} for i in range(5000)]}
    message = others_are_served_while(daemon, lambda ch: set_working(ch, content, schema))
    assert "json_schema" in message and "schema_time_budget_ms" in message


@pytest.mark.parametrize(
    ("schema", "field"),
    [
        ({"$ref": "#"}, "json_schema.$ref"),
        ({"$defs": {"a": {"allOf": [{"$ref": "#/$defs/a"}]}}, "$ref": "#/$defs/a"}, "$defs.a"),
    ],
)
def test_a_reference_cycle_is_refused_naming_it(
    daemon: Daemon, schema: dict[str, Any], field: str
) -> None:
    """It answered INTERNAL (RecursionError) before (issue 30, item 6)."""
    with daemon.channel() as channel:
        code, message = outcome(lambda: set_working(channel, {"x": 1}, schema))
    assert code == grpc.StatusCode.INVALID_ARGUMENT, (code, message)
    assert field in message and "cycle" in message
