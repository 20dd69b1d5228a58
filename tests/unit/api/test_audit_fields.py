"""What the audit log records a call touched: ids and keys, read from field names."""

from __future__ import annotations

from memoryd.api.audit_fields import touched
from memoryd_proto.v1 import common_pb2, lifecycle_service_pb2, memory_service_pb2


def _memory(memory_id: str) -> common_pb2.Memory:
    return common_pb2.Memory(id=memory_id)


def test_a_batch_response_names_every_result_in_order_once() -> None:
    response = memory_service_pb2.RememberBatchResponse(
        results=[
            memory_service_pb2.RememberResult(memory=_memory(i))
            for i in ("a", "b", "a", "c")  # "a" twice: two items collapsed into one memory
        ]
    )
    assert touched(None, response) == (["a", "b", "c"], "")


def test_id_lists_nested_selectors_and_keys() -> None:
    forget = memory_service_pb2.ForgetMemoriesRequest(agent_id="x", ids=["m1", "m2"])
    forgotten = memory_service_pb2.ForgetMemoriesResponse(forgotten_ids=["m2"])
    assert touched(forget, forgotten) == (["m1", "m2"], "")

    archive = lifecycle_service_pb2.ArchiveRequest(
        selector=lifecycle_service_pb2.MemorySelector(ids=["s1"])
    )
    assert touched(archive, lifecycle_service_pb2.ArchiveResponse(archived=1)) == (["s1"], "")

    keyed = memory_service_pb2.SetMemoryRequest(agent_id="x", key="profile/name")
    assert touched(keyed, None) == ([], "profile/name")


def test_a_huge_response_is_capped() -> None:
    response = memory_service_pb2.RememberBatchResponse(
        results=[memory_service_pb2.RememberResult(memory=_memory(f"m{i}")) for i in range(1500)]
    )
    ids, _ = touched(None, response)
    assert ids == [f"m{i}" for i in range(1000)]


def test_no_message_no_ids() -> None:
    assert touched(None, None) == ([], "")
    assert touched(memory_service_pb2.RecallResponse(), None) == ([], "")
