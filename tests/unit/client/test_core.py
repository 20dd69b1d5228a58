"""The shared core: retry policy, which calls are retried, and the method descriptors."""

from __future__ import annotations

import inspect
import random

import grpc
import pytest
from hypothesis import given
from hypothesis import strategies as st

from memoryd_client import AsyncMemorydClient, MemorydClient, RetryPolicy
from memoryd_client.api import Api
from memoryd_client.core import NO_RETRY, Method, retry_policy_for
from memoryd_client.ops import agent_state, changes, keys, lifecycle, memories, snapshot
from memoryd_proto.v1 import lifecycle_service_pb2, memory_service_pb2, snapshot_service_pb2

UNAVAILABLE = grpc.StatusCode.UNAVAILABLE


@given(
    attempt=st.integers(1, 30),
    initial=st.floats(0, 10),
    multiplier=st.floats(1, 4),
    cap=st.floats(0, 60),
    jitter=st.floats(0, 1),
    seed=st.integers(0, 2**32),
)
def test_backoff_is_bounded_exponential_with_jitter(
    attempt: int, initial: float, multiplier: float, cap: float, jitter: float, seed: int
) -> None:
    policy = RetryPolicy(
        initial_backoff=initial, max_backoff=cap, multiplier=multiplier, jitter=jitter
    )
    full = min(cap, initial * multiplier ** (attempt - 1))
    delay = policy.backoff(attempt, random.Random(seed))
    assert full * (1 - jitter) - 1e-9 <= delay <= full + 1e-9


def test_without_jitter_the_delays_double_up_to_the_cap() -> None:
    policy = RetryPolicy(initial_backoff=0.5, max_backoff=3, multiplier=2, jitter=0)
    assert [policy.backoff(n) for n in range(1, 6)] == [0.5, 1, 2, 3, 3]


def test_delay_before_retry() -> None:
    policy = RetryPolicy(max_attempts=3, initial_backoff=1, jitter=0)
    assert policy.delay_before_retry(1, UNAVAILABLE, None) == 1
    assert policy.delay_before_retry(2, UNAVAILABLE, 10) == 2
    assert policy.delay_before_retry(3, UNAVAILABLE, None) is None  # out of attempts
    assert policy.delay_before_retry(1, UNAVAILABLE, 0.5) is None  # past the deadline
    assert policy.delay_before_retry(1, grpc.StatusCode.INTERNAL, None) is None
    assert policy.delay_before_retry(1, None, None) is None


@pytest.mark.parametrize(
    "bad",
    [{"max_attempts": 0}, {"multiplier": 0.5}, {"jitter": 2}, {"initial_backoff": -1}],
)
def test_bad_policies_are_rejected(bad: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        RetryPolicy(**bad)  # type: ignore[arg-type]


RETRIED = [
    memories.recall("a", "q"),
    memories.get("a", "id"),
    memories.list_memories("a"),
    memories.forget("a", ["id"]),
    memories.update("a", "id", content="x", if_version=3),
    keys.get_key("a", "/k"),
    keys.set_memory("a", "/k", 1, source={"kind": "user"}, if_version=2),
    agent_state.set_working_memory("a", {"x": 1}, replace=True),
    agent_state.delete_working_memory("a"),
    agent_state.set_profile("a", "doc", if_match="none"),
    agent_state.get_session_window("a", "s"),
    agent_state.get_session_messages("a", "s"),
    agent_state.delete_messages("a", "s", [3]),
    agent_state.clear_session("a", "s"),
    agent_state.get_session_attachment("a", "s", 3),
    snapshot.build_snapshot("a", "t"),
    lifecycle.get_stats("a"),
    lifecycle.archive("a", ids=["x"]),
    lifecycle.undo_consolidation("a", ["x"]),
    lifecycle.erase("a", whole_agent=True),
    lifecycle.verify_erasure(["x"]),
]
NOT_RETRIED = [
    memories.remember("a", "x"),
    memories.remember_batch("a", ["x"]),
    memories.update("a", "id", content="x"),
    keys.set_memory("a", "/k", 1, source={"kind": "user"}),
    agent_state.set_working_memory("a", {"x": 1}),
    agent_state.append_messages("a", "s", [("user", "hi")]),
    agent_state.end_session("a", "s"),
    snapshot.save_state("a", "s", {"c": {}}),
    lifecycle.compact("a"),
    lifecycle.consolidate("a"),
    lifecycle.reset("a", confirm=True),
    lifecycle.import_records([]),
]


@pytest.mark.parametrize("call", RETRIED, ids=lambda c: c.method)
def test_reads_deletes_and_conditional_writes_are_retried(call: object) -> None:
    assert retry_policy_for(call, RetryPolicy(), retry_writes=False) != NO_RETRY  # type: ignore[arg-type]


@pytest.mark.parametrize("call", NOT_RETRIED, ids=lambda c: c.method)
def test_other_writes_only_when_the_caller_opts_in(call: object) -> None:
    policy = RetryPolicy()
    assert retry_policy_for(call, policy, retry_writes=False) == NO_RETRY  # type: ignore[arg-type]
    opted = retry_policy_for(call, policy, retry_writes=True)  # type: ignore[arg-type]
    # A client stream cannot be replayed, opt-in or not.
    assert opted == (NO_RETRY if call.method == "Import" else policy)  # type: ignore[attr-defined]


OTHERS = [
    keys.list_keys("a"),
    keys.key_history("a", "/k"),
    agent_state.get_working_memory("a"),
    agent_state.list_working_memory_scopes("a"),
    agent_state.get_profile("a"),
    agent_state.inject_instruction("a", "s", "be brief"),
    snapshot.default_read("a"),
    snapshot.load_state("a", "s"),
    lifecycle.restore("a", ids=["x"]),
    lifecycle.prune("a", dry_run=True),
    lifecycle.run_maintenance("a"),
    lifecycle.reembed("a"),
    lifecycle.export("a"),
    changes.watch("a"),
]


def test_every_rpc_has_a_helper_on_both_clients() -> None:
    rpcs = {
        m.name
        for module in (memory_service_pb2, snapshot_service_pb2, lifecycle_service_pb2)
        for service in module.DESCRIPTOR.services_by_name.values()
        for m in service.methods
    }
    assert {c.method for c in [*RETRIED, *NOT_RETRIED, *OTHERS]} == rpcs
    helpers = {getattr(v, "helper", None) for v in vars(Api).values()}
    for module in (memories, keys, agent_state, snapshot, lifecycle, changes):
        public = [
            f
            for name, f in vars(module).items()
            if inspect.isfunction(f)
            and f.__module__ == module.__name__
            and not name.startswith("_")
            and "return" in f.__annotations__
            and str(f.__annotations__["return"]).startswith(("Unary[", "ServerStream["))
        ]
        assert public and [f.__name__ for f in public if f not in helpers] == []
    assert issubclass(MemorydClient, Api) and issubclass(AsyncMemorydClient, Api)


def test_helpers_keep_their_docs_and_signatures() -> None:
    method = Api.__dict__["remember"]
    assert isinstance(method, Method)
    assert "Not idempotent" in (MemorydClient.remember.__doc__ or "")
    assert list(inspect.signature(MemorydClient.remember).parameters)[:2] == ["agent_id", "content"]
