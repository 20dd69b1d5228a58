"""MemorydError from a failed call, with google.rpc.BadRequest field violations."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from concurrent import futures
from typing import Any

import grpc
import pytest
from google.protobuf import any_pb2
from google.rpc import code_pb2, error_details_pb2, status_pb2
from grpc_status import rpc_status

from memoryd_client import (
    FieldViolation,
    InvalidArgumentError,
    MemorydClient,
    MemorydError,
    NotFoundError,
    UnavailableError,
    from_rpc_error,
)
from memoryd_client.errors import STATUS_DETAILS_KEY, status_from_trailers

MESSAGE = "invalid argument: content: must not be empty; tags[1]: must not be empty"
VIOLATIONS = [("content", "must not be empty"), ("tags[1]", "must not be empty")]


def bad_request_status(message: str = MESSAGE) -> status_pb2.Status:
    bad = error_details_pb2.BadRequest(
        field_violations=[
            error_details_pb2.BadRequest.FieldViolation(field=f, description=d)
            for f, d in VIOLATIONS
        ]
    )
    detail = any_pb2.Any()
    detail.Pack(bad)
    return status_pb2.Status(code=code_pb2.INVALID_ARGUMENT, message=message, details=[detail])


class FakeCallError(grpc.RpcError, grpc.Call):
    """What a failed unary call raises: an RpcError that is also a Call."""

    def __init__(self, code: Any, details: str, trailers: Sequence[tuple[str, Any]] = ()) -> None:
        self._code, self._details, self._trailers = code, details, tuple(trailers)

    def code(self) -> Any:
        return self._code

    def details(self) -> str:
        return self._details

    def trailing_metadata(self) -> Any:
        return self._trailers

    def initial_metadata(self) -> Any:
        return ()

    def is_active(self) -> bool:
        return False

    def time_remaining(self) -> float:
        return 0.0

    def cancel(self) -> bool:
        return False

    def add_callback(self, callback: Any) -> bool:
        return False


def test_decodes_bad_request_field_violations() -> None:
    trailers = [
        ("x-request-id", "req-1"),
        (STATUS_DETAILS_KEY, bad_request_status().SerializeToString()),
    ]
    error = from_rpc_error(FakeCallError(grpc.StatusCode.INVALID_ARGUMENT, MESSAGE, trailers))
    assert isinstance(error, InvalidArgumentError)
    assert isinstance(error, MemorydError)
    assert error.code == grpc.StatusCode.INVALID_ARGUMENT
    assert error.code_name == "INVALID_ARGUMENT"
    assert error.message == MESSAGE
    assert error.request_id == "req-1"
    assert error.field_violations == tuple(FieldViolation(f, d) for f, d in VIOLATIONS)
    assert str(error) == f"INVALID_ARGUMENT: {MESSAGE}"


def test_falls_back_to_the_raw_trailer_when_grpc_status_refuses() -> None:
    # grpc_status.from_call raises when the status message differs from the call's details.
    trailers = [(STATUS_DETAILS_KEY, bad_request_status("something else").SerializeToString())]
    call = FakeCallError(grpc.StatusCode.INVALID_ARGUMENT, MESSAGE, trailers)
    with pytest.raises(ValueError):
        rpc_status.from_call(call)
    error = from_rpc_error(call)
    assert [v.field for v in error.field_violations] == ["content", "tags[1]"]
    assert error.message == MESSAGE


def test_no_details_and_garbled_details() -> None:
    plain = from_rpc_error(FakeCallError(grpc.StatusCode.NOT_FOUND, "memory 'x' not found"))
    assert isinstance(plain, NotFoundError)
    assert plain.field_violations == () and plain.request_id == ""
    garbled = FakeCallError(
        grpc.StatusCode.INVALID_ARGUMENT, "bad", [(STATUS_DETAILS_KEY, b"\xff\xfenot a status")]
    )
    assert from_rpc_error(garbled).field_violations == ()
    assert status_from_trailers([(STATUS_DETAILS_KEY, b"\xff\xfe")]) is None
    assert status_from_trailers(None) is None


def test_unknown_code_is_plain_memoryd_error() -> None:
    error = from_rpc_error(FakeCallError(grpc.StatusCode.DATA_LOSS, "lost"))
    assert type(error) is MemorydError and error.code_name == "DATA_LOSS"


# ------------------------------------------------------------------ over a real channel

REMEMBER = "/memoryd.v1.MemoryService/Remember"


def _reject(request: bytes, context: grpc.ServicerContext) -> bytes:
    context.set_trailing_metadata((("x-request-id", "req-42"),))
    context.abort_with_status(rpc_status.to_status(bad_request_status()))
    raise AssertionError("unreachable")


@pytest.fixture
def rejecting_server() -> Iterator[str]:
    """An in-process gRPC server whose Remember always fails like memoryd's validation."""
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    handler: Any = grpc.unary_unary_rpc_method_handler(_reject)
    server.add_generic_rpc_handlers(
        (grpc.method_handlers_generic_handler("memoryd.v1.MemoryService", {"Remember": handler}),)
    )
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    yield f"127.0.0.1:{port}"
    server.stop(grace=None)


def test_client_raises_decoded_error_over_grpc(rejecting_server: str) -> None:
    with MemorydClient(rejecting_server) as client, pytest.raises(InvalidArgumentError) as info:
        client.remember("agent", "")
    error = info.value
    assert error.code_name == "INVALID_ARGUMENT"
    assert {(v.field, v.description) for v in error.field_violations} == set(VIOLATIONS)


def test_no_daemon_is_unavailable(tmp_path: Any) -> None:
    client = MemorydClient(str(tmp_path / "nobody.sock"), timeout=30)
    with client, pytest.raises(UnavailableError) as info:
        client.health()
    assert info.value.request_id == ""
