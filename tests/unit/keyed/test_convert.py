"""google.protobuf.Value <-> JSON data, and SetMemory request conversion."""

from __future__ import annotations

import math
from typing import Any

import pytest
from google.protobuf import struct_pb2
from hypothesis import given
from hypothesis import strategies as st

from memoryd.api.convert.common import json_from_value, json_to_value
from memoryd.api.convert.keyed import key_write_from
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.models import ProvenanceKind, SecurityLevel
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb

json_data = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.floats(allow_nan=False, allow_infinity=False).filter(lambda f: not f.is_integer())
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8), children, max_size=4)
    ),
    max_leaves=20,
)


@given(json_data)
def test_round_trip(data: Any) -> None:
    value = struct_pb2.Value()
    json_to_value(data, value)
    assert json_from_value(value, "content") == data


def test_integral_numbers_come_back_as_ints() -> None:
    value = struct_pb2.Value(number_value=3.0)
    assert json_from_value(value, "content") == 3
    assert type(json_from_value(value, "content")) is int
    big = struct_pb2.Value(number_value=2.0**60)
    assert type(json_from_value(big, "content")) is float


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_non_finite_numbers_are_rejected_with_their_path(number: float) -> None:
    value = struct_pb2.Value()
    value.struct_value.fields["a"].list_value.values.add().number_value = number
    with pytest.raises(InvalidArgument) as err:
        json_from_value(value, "content")
    assert [v.field for v in err.value.violations] == ["content.a[0]"]


def test_unset_values_are_rejected() -> None:
    with pytest.raises(InvalidArgument) as err:
        key_write_from(mpb.SetMemoryRequest(agent_id="a", key="/k"))
    assert [v.field for v in err.value.violations] == ["content_json"]
    unset_inside = mpb.SetMemoryRequest(agent_id="a", key="/k")
    unset_inside.content.struct_value.fields["x"].SetInParent()
    with pytest.raises(InvalidArgument) as err:
        key_write_from(unset_inside)
    assert [v.field for v in err.value.violations] == ["content.x"]


def test_null_and_empty_object() -> None:
    tomb = key_write_from(
        mpb.SetMemoryRequest(key="/k", content=struct_pb2.Value(null_value=struct_pb2.NULL_VALUE))
    )
    assert tomb.content.value is None and tomb.content.text == "null"
    empty = mpb.SetMemoryRequest(key="/k")
    empty.content.struct_value.SetInParent()
    assert key_write_from(empty).content.value == {}


def test_request_fields() -> None:
    req = mpb.SetMemoryRequest(
        key="/k",
        content=struct_pb2.Value(string_value="x"),
        source=pb.Provenance(kind=pb.PROVENANCE_KIND_WEB, name="n", locator="l"),
        if_version=0,
        security_level=pb.SECURITY_LEVEL_CONFIDENTIAL,
        namespace="ns",
    )
    write = key_write_from(req)
    assert write.if_version == 0 and write.security_level is SecurityLevel.CONFIDENTIAL
    assert write.source is not None and write.source.kind is ProvenanceKind.WEB
    assert write.namespace == "ns"
    unset = key_write_from(
        mpb.SetMemoryRequest(key="/k", content=struct_pb2.Value(bool_value=True))
    )
    assert unset.if_version is None and unset.security_level is None and unset.source is None
    with pytest.raises(InvalidArgument) as err:
        key_write_from(
            mpb.SetMemoryRequest(
                key="/k",
                content=struct_pb2.Value(bool_value=True),
                security_level=99,  # type: ignore[arg-type]
            )
        )
    assert [v.field for v in err.value.violations] == ["security_level"]


def test_content_json_is_passed_as_text() -> None:
    write = key_write_from(mpb.SetMemoryRequest(key="/k", content_json='{"n": 12345678901234567}'))
    assert write.content.text == '{"n":12345678901234567}'
    assert write.content.value == {"n": 12345678901234567}


def test_content_and_content_json_together_are_rejected() -> None:
    req = mpb.SetMemoryRequest(key="/k", content_json="1", content=struct_pb2.Value(number_value=1))
    with pytest.raises(InvalidArgument) as err:
        key_write_from(req)
    assert [v.field for v in err.value.violations] == ["content_json"]
    assert "not both" in err.value.violations[0].description


def test_an_unspecified_source_kind_is_rejected_naming_source_kind() -> None:
    req = mpb.SetMemoryRequest(
        key="/k", content_json="1", source=pb.Provenance(name="calendar-sync")
    )
    with pytest.raises(InvalidArgument) as err:
        key_write_from(req)
    assert [v.field for v in err.value.violations] == ["source.kind"]
