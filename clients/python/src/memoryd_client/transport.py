"""Connection settings both clients share (address, credentials, deadlines, retries)
and the blocking executor of the sync client."""

from __future__ import annotations

import copy
import dataclasses
import os
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self, TypeVar

import grpc
from grpc_health.v1 import health_pb2_grpc

from memoryd_client.core import (
    Deadline,
    RetryPolicy,
    ServerStream,
    Service,
    Unary,
    retry_policy_for,
    status_code,
)
from memoryd_client.errors import REQUEST_ID_KEY, MemorydError, from_rpc_error
from memoryd_client.target import parse_target
from memoryd_proto.v1 import (
    lifecycle_service_pb2_grpc,
    memory_service_pb2_grpc,
    snapshot_service_pb2_grpc,
)

T = TypeVar("T")
DEFAULT_TIMEOUT = 10.0
#: Environment variable holding an API key, used when ``api_key`` is not given.
API_KEY_ENV = "MEMORYD_API_KEY"
Metadata = Sequence[tuple[str, str | bytes]]
_UNSET: Any = object()


@dataclass(frozen=True, slots=True)
class TlsConfig:
    """TLS to the daemon, from PEM files.

    ``ca_file``: the CA that signed the daemon's certificate (None: the system roots).
    ``cert_file`` + ``key_file``: this client's certificate, for mTLS.
    ``server_name``: the name to verify when it differs from the address's host.
    """

    ca_file: str | Path | None = None
    cert_file: str | Path | None = None
    key_file: str | Path | None = None
    server_name: str | None = None

    def credentials(self) -> grpc.ChannelCredentials:
        if (self.cert_file is None) != (self.key_file is None):
            raise ValueError("mTLS needs both cert_file and key_file")
        return grpc.ssl_channel_credentials(
            root_certificates=_read(self.ca_file),
            private_key=_read(self.key_file),
            certificate_chain=_read(self.cert_file),
        )

    def channel_options(self) -> list[tuple[str, Any]]:
        if self.server_name is None:
            return []
        return [("grpc.ssl_target_name_override", self.server_name)]


def _read(path: str | Path | None) -> bytes | None:
    return None if path is None else Path(path).expanduser().read_bytes()


@dataclass(frozen=True, slots=True)
class CallOptions:
    """Per-client call settings; :meth:`BaseTransport.with_options` changes them.

    ``timeout``: seconds for a unary call including its retries (None: no deadline).
    ``stream_timeout``: the same for streaming and long operations (default: none).
    ``retry``: the policy for UNAVAILABLE; applied to idempotent calls only unless
    ``retry_writes`` (then also to Remember, AppendMessages, ...: a write whose reply
    was lost may be applied twice).
    """

    timeout: float | None = DEFAULT_TIMEOUT
    stream_timeout: float | None = None
    retry: RetryPolicy = field(default_factory=RetryPolicy)
    retry_writes: bool = False
    metadata: tuple[tuple[str, str | bytes], ...] = ()


class BaseTransport:
    """What both clients share: target, credentials, options and the stubs."""

    def __init__(
        self,
        target: str | None = None,
        *,
        api_key: str | None = None,
        tls: TlsConfig | bool | None = None,
        timeout: float | None = DEFAULT_TIMEOUT,
        stream_timeout: float | None = None,
        retry: RetryPolicy | None = None,
        retry_writes: bool = False,
        metadata: Metadata = (),
        options: Sequence[tuple[str, Any]] = (),
    ) -> None:
        self.target = parse_target(target)
        key = api_key if api_key is not None else os.environ.get(API_KEY_ENV, "").strip()
        headers = tuple(metadata)
        if key:
            headers = (("authorization", f"Bearer {key}"), *headers)
        self.options = CallOptions(
            timeout, stream_timeout, retry or RetryPolicy(), retry_writes, headers
        )
        tls_config = TlsConfig() if tls is True else tls or None
        credentials = tls_config.credentials() if tls_config is not None else None
        channel_options = [*options, *(tls_config.channel_options() if tls_config else [])]
        self._channel = self._open(credentials, channel_options)
        #: Raw stubs, for anything without a helper (``client.call(stub.Method, request)``).
        self.memory: Any = memory_service_pb2_grpc.MemoryServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self.snapshot: Any = snapshot_service_pb2_grpc.SnapshotServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self.lifecycle: Any = lifecycle_service_pb2_grpc.LifecycleServiceStub(self._channel)  # type: ignore[no-untyped-call]
        self._health: Any = health_pb2_grpc.HealthStub(self._channel)

    def _open(self, credentials: grpc.ChannelCredentials | None, options: list[Any]) -> Any:
        raise NotImplementedError

    @property
    def channel(self) -> Any:
        """The underlying gRPC channel (``grpc.Channel`` or ``grpc.aio.Channel``)."""
        return self._channel

    @property
    def timeout(self) -> float | None:
        return self.options.timeout

    @property
    def metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        """Metadata sent with every call (credentials included)."""
        return self.options.metadata

    def with_options(
        self,
        *,
        timeout: float | None = _UNSET,
        stream_timeout: float | None = _UNSET,
        retry: RetryPolicy = _UNSET,
        retry_writes: bool = _UNSET,
        metadata: Metadata = _UNSET,
    ) -> Self:
        """A client sharing this one's channel with other call settings, e.g.
        ``client.with_options(retry_writes=True).remember(...)``. Closing either closes
        the channel of both. ``metadata`` is added to this client's."""
        changes: dict[str, Any] = {
            k: v
            for k, v in {
                "timeout": timeout,
                "stream_timeout": stream_timeout,
                "retry": retry,
                "retry_writes": retry_writes,
            }.items()
            if v is not _UNSET
        }
        if metadata is not _UNSET:
            changes["metadata"] = (*self.options.metadata, *metadata)
        clone = copy.copy(self)
        clone.options = dataclasses.replace(self.options, **changes)
        return clone

    def _metadata(self) -> tuple[tuple[str, str | bytes], ...]:
        """The call's metadata; one request id per logical call, kept across retries so
        the daemon's log ties the attempts together."""
        headers = self.options.metadata
        if any(k == REQUEST_ID_KEY for k, _ in headers):
            return headers
        return (*headers, (REQUEST_ID_KEY, uuid.uuid4().hex))

    def _stub(self, service: Service, method: str) -> Callable[..., Any]:
        stub = self._health if service == "health" else getattr(self, service)
        bound: Callable[..., Any] = getattr(stub, method)
        return bound

    def __repr__(self) -> str:
        return f"{type(self).__name__}(target={self.target!r})"


class SyncTransport(BaseTransport):
    """Runs calls on a blocking ``grpc.Channel``."""

    def _open(self, credentials: grpc.ChannelCredentials | None, options: list[Any]) -> Any:
        if credentials is None:
            return grpc.insecure_channel(self.target, options=options)
        return grpc.secure_channel(self.target, credentials, options=options)

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def run(self, call: Unary[T]) -> T:
        """Carry out ``call`` (retries, deadline, error mapping, fallback)."""
        try:
            return self._attempts(call)
        except MemorydError as error:
            alternative = call.fallback(error) if call.fallback is not None else None
            if alternative is None:
                raise
            return self.run(alternative)

    def _attempts(self, call: Unary[T]) -> T:
        policy = retry_policy_for(call, self.options.retry, self.options.retry_writes)
        long = call.fold is not None or call.stream_in
        deadline = Deadline(self.options.stream_timeout if long else self.options.timeout)
        method, metadata = self._stub(call.service, call.method), self._metadata()
        attempt = 0
        while True:
            attempt += 1
            try:
                return self._once(call, method, deadline.remaining(), metadata)
            except grpc.RpcError as exc:
                delay = policy.delay_before_retry(attempt, status_code(exc), deadline.remaining())
                if delay is None:
                    raise from_rpc_error(exc) from None
                time.sleep(delay)

    @staticmethod
    def _once(call: Unary[T], method: Any, timeout: float | None, metadata: Any) -> T:
        if call.fold is not None:
            fold = call.fold()
            for response in method(call.request, timeout=timeout, metadata=metadata):
                fold.feed(response)
            return fold.result()
        return call.parse(method(call.request, timeout=timeout, metadata=metadata))

    def run_stream(self, call: ServerStream[T]) -> Iterator[T]:
        """Yield the items of a server stream (not retried: re-issue it instead)."""
        method = self._stub(call.service, call.method)
        responses = method(
            call.request, timeout=self.options.stream_timeout, metadata=self._metadata()
        )
        try:
            for response in responses:
                item = call.parse(response)
                if item is not None:
                    yield item
                elif call.on_event is not None:
                    call.on_event(response)
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from None
        finally:
            responses.cancel()  # a consumer that stops early must not leave the stream open

    def call(
        self, method: Callable[..., Any], request: Any, *, timeout: float | None = None
    ) -> Any:
        """Invoke a raw unary stub method with this client's deadline, metadata and error
        mapping (no retries): ``client.call(client.lifecycle.GetStats, request)``."""
        try:
            return method(
                request,
                timeout=self.options.timeout if timeout is None else timeout,
                metadata=self._metadata(),
            )
        except grpc.RpcError as exc:
            raise from_rpc_error(exc) from None
