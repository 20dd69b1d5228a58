"""The synchronous memoryd client.

Helpers return typed results (``memoryd_client.results``; each keeps its protobuf as
``.raw``); anything without a helper is one call away on the raw stubs ``.memory``,
``.snapshot`` and ``.lifecycle`` (use :meth:`MemorydClient.call` to get the same
deadline, metadata and error mapping).
"""

from __future__ import annotations

from memoryd_client.api import Api
from memoryd_client.transport import DEFAULT_TIMEOUT, SyncTransport

__all__ = ["DEFAULT_TIMEOUT", "MemorydClient"]


class MemorydClient(Api, SyncTransport):
    """A connection to one memoryd daemon.

    >>> with MemorydClient("127.0.0.1:50051") as client:  # doctest: +SKIP
    ...     client.remember("demo", "The user prefers dark mode", tags=["ui"])
    ...     hits = client.recall("demo", "which theme does the user like?")

    ``target``: ``host:port``, ``unix:/path`` or a socket path (None:
    ``$MEMORYD_ADDRESS`` or ``127.0.0.1:50051``). ``api_key`` is sent as
    ``authorization: Bearer`` (None: ``$MEMORYD_API_KEY`` when set); ``tls`` is a
    :class:`~memoryd_client.TlsConfig` (or True for the system roots). ``timeout``
    covers a unary call and its retries; ``retry`` retries UNAVAILABLE with backoff,
    for idempotent calls only unless ``retry_writes``. Failed calls raise
    :class:`~memoryd_client.MemorydError`.
    """
