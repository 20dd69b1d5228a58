"""Keyed memory: one slot per path like ``/user/preference/style``, last write wins."""

from __future__ import annotations

from typing import Any

from memoryd_client import requests as rq
from memoryd_client.core import Unary
from memoryd_client.results import KeyEntry, KeyListing, Page
from memoryd_proto.v1 import memory_service_pb2


def set_memory(
    agent_id: str,
    key: str,
    content: Any,
    *,
    source: rq.SourceArg,
    if_version: int | None = None,
    security_level: rq.EnumArg | None = None,
    namespace: str = "",
) -> Unary[KeyEntry]:
    """Write ``content`` (any JSON value, or :class:`~memoryd_client.JsonText` stored
    as written) to ``key``; ``None`` writes a tombstone.

    ``source`` is required on every write, tombstones included: ``{"kind": "user"}``,
    ``{"kind": "agent"}``, or for web / tool / file and keys under /kb/ also ``name``,
    ``retrieved_at`` (a datetime) and ``locator``. The content travels as JSON text,
    so it reads back exactly (``12345678901234567`` stays an int).

    Each write is a new version in the key's history, so it is retried on UNAVAILABLE
    only with ``if_version`` (a repeat then fails cleanly) or ``retry_writes``.
    """
    request = memory_service_pb2.SetMemoryRequest(
        agent_id=agent_id,
        key=key,
        content_json=rq.json_text(content, "content"),
        source=rq.provenance(source),
        namespace=namespace,
    )
    if if_version is not None:
        request.if_version = if_version
    if security_level is not None:
        request.security_level = rq.security_level_value(security_level)
    return Unary(
        "memory",
        "SetMemory",
        request,
        lambda r: KeyEntry.from_pb(r.entry),
        idempotent=if_version is not None,
    )


def get_key(agent_id: str, key: str, *, as_of: rq.AsOfArg | None = None) -> Unary[KeyEntry]:
    """The key's current entry (a tombstone has ``valid=False``); ``NotFoundError`` if none.
    ``as_of``: its entry at a past time or log position (docs/as-of.md)."""
    request = memory_service_pb2.GetKeyRequest(agent_id=agent_id, key=key)
    rq.set_as_of(request, as_of)
    return Unary("memory", "GetKey", request, lambda r: KeyEntry.from_pb(r.entry), idempotent=True)


def list_keys(
    agent_id: str,
    prefix: str = "/",
    *,
    recursive: bool = False,
    page_size: int | None = None,
    page_token: str = "",
    as_of: rq.AsOfArg | None = None,
) -> Unary[KeyListing]:
    """Like ``ls``: the keys directly under ``prefix`` and its sub-directories
    (``recursive``: every key below it); ``as_of``: as they were at a past time or
    log position (docs/as-of.md)."""
    request = memory_service_pb2.ListKeysRequest(
        agent_id=agent_id,
        prefix=prefix,
        recursive=recursive,
        page_size=rq.positive_or_unset(page_size, "page_size"),
        page_token=page_token,
    )
    rq.set_as_of(request, as_of)
    return Unary("memory", "ListKeys", request, _listing, idempotent=True)


def _listing(r: memory_service_pb2.ListKeysResponse) -> KeyListing:
    return KeyListing(
        tuple(KeyEntry.from_pb(e) for e in r.entries), tuple(r.directories), r.next_page_token
    )


def key_history(
    agent_id: str, key: str, *, page_size: int | None = None, page_token: str = ""
) -> Unary[Page[KeyEntry]]:
    """Every write of ``key``, oldest first, tombstones included."""
    request = memory_service_pb2.KeyHistoryRequest(
        agent_id=agent_id,
        key=key,
        page_size=rq.positive_or_unset(page_size, "page_size"),
        page_token=page_token,
    )
    return Unary(
        "memory",
        "KeyHistory",
        request,
        lambda r: Page(tuple(KeyEntry.from_pb(e) for e in r.entries), r.next_page_token),
        idempotent=True,
    )
