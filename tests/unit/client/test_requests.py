"""Request builders shared by the sync and async clients."""

from __future__ import annotations

import json

import pytest
from google.protobuf import json_format

from memoryd_client import InvalidArgumentError
from memoryd_client import requests as rq
from memoryd_client.ops.agent_state import append_messages, session_message
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb


def test_remember_request_defaults_and_fields() -> None:
    req = rq.remember_request("a", "text")
    assert req.agent_id == "a" and req.content == "text"
    assert req.memory_type == pb.MEMORY_TYPE_FACT
    assert not req.HasField("importance") and not req.HasField("metadata")
    assert req.security_level == pb.SECURITY_LEVEL_UNSPECIFIED

    req = rq.remember_request(
        "a",
        "text",
        memory_type="PREFERENCE",
        tags="one tag",
        importance=0.0,
        namespace="ns",
        metadata={"turn": 3, "nested": {"ok": True}},
        security_level="confidential",
        embedding=[0.5, 1],
    )
    assert req.memory_type == pb.MEMORY_TYPE_PREFERENCE
    assert list(req.tags) == ["one tag"]
    assert req.HasField("importance") and req.importance == 0.0
    assert json.loads(req.metadata_json) == {"turn": 3, "nested": {"ok": True}}
    assert not req.HasField("metadata")  # as JSON text: integers keep every digit
    assert req.security_level == pb.SECURITY_LEVEL_CONFIDENTIAL
    assert list(req.embedding) == [0.5, 1.0]


@pytest.mark.parametrize("value", ["fact", "FACT", "memory_type_fact", "MEMORY_TYPE_FACT", 2])
def test_memory_type_spellings(value: str | int) -> None:
    assert rq.memory_type_value(value) == pb.MEMORY_TYPE_FACT
    assert rq.memory_type_name(pb.MEMORY_TYPE_FACT) == "fact"


@pytest.mark.parametrize(
    ("call", "field"),
    [
        (lambda: rq.remember_request("a", "t", memory_type="opinion"), "memory_type"),
        (lambda: rq.remember_request("a", "t", memory_type=99), "memory_type"),
        (lambda: rq.remember_request("a", "t", security_level="secret"), "security_level"),
        (lambda: rq.remember_request("a", "t", metadata={"x": object()}), "metadata"),
        (lambda: rq.recall_request("a", "q", limit=0), "limit"),
        (lambda: rq.recall_request("a", "q", scoring="best"), "scoring.preset"),
        (lambda: rq.recall_request("a", "q", memory_types=["fact", "nope"]), "memory_types[1]"),
        (lambda: rq.list_request("a", page_size=0), "page_size"),
        (
            lambda: rq.remember_batch_request("a", ["ok", {"content": "x", "typo": 1}]),  # type: ignore[list-item]
            "items[1]",
        ),
        (
            lambda: rq.remember_batch_request("a", [{"content": "x", "memory_type": "?"}]),
            "items[0].memory_type",
        ),
        (lambda: rq.remember_batch_request("a", [42]), "items[0]"),  # type: ignore[list-item]
    ],
)
def test_client_side_rejections_name_the_field(call: object, field: str) -> None:
    with pytest.raises(InvalidArgumentError) as info:
        call()  # type: ignore[operator]
    assert [v.field for v in info.value.field_violations] == [field]
    assert info.value.code_name == "INVALID_ARGUMENT"


def test_recall_request() -> None:
    req = rq.recall_request("a", "q")
    assert req.limit == 10 and not req.HasField("namespace") and not req.HasField("scoring")
    req = rq.recall_request(
        "a", "q", limit=3, namespace="", tags=["x"], memory_types=["skill"], scoring="weighted"
    )
    assert req.limit == 3 and req.HasField("namespace") and req.namespace == ""
    assert list(req.memory_types) == [pb.MEMORY_TYPE_SKILL]
    assert req.scoring.preset == mpb.SCORING_PRESET_WEIGHTED
    custom = mpb.Scoring(preset=mpb.SCORING_PRESET_DECAYED, half_life_hours=24)
    assert rq.recall_request("a", "q", scoring=custom).scoring == custom


def test_list_and_forget_requests() -> None:
    req = rq.list_request("a", page_size=5, page_token="t", namespace="ns", tags=("x", "y"))
    assert (req.page_size, req.page_token, req.namespace) == (5, "t", "ns")
    assert list(req.tags) == ["x", "y"]
    assert list(rq.forget_request("a", "only-one").ids) == ["only-one"]
    assert list(rq.forget_request("a", ["1", "2"]).ids) == ["1", "2"]


def test_batch_request_mixes_item_kinds() -> None:
    explicit = mpb.RememberRequest(content="c", memory_type=pb.MEMORY_TYPE_EPISODE)
    batch = rq.remember_batch_request(
        "a", ["plain", {"content": "dict", "tags": ["t"], "importance": 0.9}, explicit]
    )
    assert batch.agent_id == "a"
    assert [i.content for i in batch.items] == ["plain", "dict", "c"]
    assert all(i.agent_id == "" for i in batch.items)
    assert list(batch.items[1].tags) == ["t"] and batch.items[1].importance == 0.9
    assert batch.items[2].memory_type == pb.MEMORY_TYPE_EPISODE


def test_openai_tool_calls_become_structured_calls() -> None:
    call = {
        "id": "call_1",
        "type": "function",
        "function": {"name": "search", "arguments": '{"q": "tea", "k": 3}'},
    }
    msg = session_message({"role": "assistant", "content": None, "tool_calls": [call]}, "m")
    assert msg.content == "" and msg.tool_calls[0].name == "search"
    assert json_format.MessageToDict(msg.tool_calls[0].arguments) == {"q": "tea", "k": 3}
    flat = session_message(
        {"role": "assistant", "content": "", "tool_calls": [{"id": "c", "name": "f"}]}, "m"
    )
    assert flat.tool_calls[0].name == "f" and not flat.tool_calls[0].HasField("arguments")
    bad = {"id": "c", "function": {"name": "f", "arguments": "{not json"}}
    with pytest.raises(InvalidArgumentError) as err:
        session_message({"role": "assistant", "content": "", "tool_calls": [bad]}, "messages[0]")
    assert err.value.field_violations[0].field == "messages[0].tool_calls[0].arguments"
    request = append_messages("a", "s", [("user", "hi")], keep_recent_messages=0).request
    assert request.compression.HasField("keep_recent_messages")
    assert not request.compression.HasField("compress_threshold_messages")
    assert not append_messages("a", "s", [("user", "hi")]).request.HasField("compression")


def test_json_text_is_sent_as_written_once_checked() -> None:
    text = '{"price": 1.50, "e": 1e2, "z": -0}'
    assert rq.json_text(rq.JsonText(text), "content", object_only=True) == text
    assert rq.remember_request("a", "x", metadata=rq.JsonText(text)).metadata_json == text
    assert rq.json_text(rq.JsonText("1.50"), "content") == "1.50"
    for bad, object_only, why in [
        ("[1.50]", True, "must be a JSON object"),
        ("{1.50", False, "is not valid JSON"),
    ]:
        with pytest.raises(InvalidArgumentError) as err:
            rq.json_text(rq.JsonText(bad), "content", object_only=object_only)
        [violation] = err.value.field_violations
        assert violation.field == "content" and why in violation.description
