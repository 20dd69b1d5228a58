"""Keyed memory: SetMemory, GetKey, ListKeys and KeyHistory messages.

Content travels as JSON text (``content_json``, stored and returned as written) or as
``google.protobuf.Value``, whose numbers are doubles: integral values within 2**53
come back as Python ints, so ``3`` round-trips as ``3`` there too. A request sets
one of the two; responses carry both.
"""

from __future__ import annotations

from google.protobuf.message import Message

from memoryd.api.convert.common import (
    REVERSE_PROVENANCE_KINDS,
    SECURITY_LEVELS,
    add_each,
    as_of_from,
    enum_value,
    json_from_value,
    json_to_value,
    provenance_from,
    set_timestamp,
)
from memoryd.domain import keyed
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.json_text import Json
from memoryd_proto.v1 import memory_service_pb2 as mpb

_REVERSE_SECURITY_LEVELS = {v: k for k, v in SECURITY_LEVELS.items()}


# ---------------------------------------------------------------- requests


def json_text_or_value(
    msg: Message, text_field: str, value_field: str, path: str = ""
) -> tuple[str | None, bool]:
    """Which form of a JSON field a request uses: (its text, or None for the message
    form; whether either is set). Both set is INVALID_ARGUMENT."""
    text = getattr(msg, text_field)
    has_value = msg.HasField(value_field)
    if text and has_value:
        raise InvalidArgument.field(
            f"{path}{text_field}",
            f"set either {text_field} (JSON text) or {value_field}, not both",
        )
    return (text or None), bool(text) or has_value


def json_of(msg: Message, text_field: str, value_field: str, path: str = "") -> Json | None:
    """A JSON field given as text or as a Value, checked (domain/json_text.py); None
    when neither is set. Both set is INVALID_ARGUMENT."""
    text, given = json_text_or_value(msg, text_field, value_field, path)
    if not given:
        return None
    if text is not None:
        return Json.from_text(text, f"{path}{text_field}")
    where = f"{path}{value_field}"
    return Json.from_value(json_from_value(getattr(msg, value_field), where), where)


def key_write_from(req: mpb.SetMemoryRequest) -> keyed.KeyWrite:
    """A SetMemory request as a key write: the value as written (content_json or content),
    source, if_version, level."""
    content = json_of(req, "content_json", "content")
    if content is None:
        raise InvalidArgument.field(
            "content_json",
            "must be set (or content): a JSON text, or null to delete the key",
        )
    source = provenance_from(req, "source")
    if req.HasField("source") and req.source.kind == 0:
        raise InvalidArgument.field(
            "source.kind",
            "must be set: PROVENANCE_KIND_UNSPECIFIED is not a source (user, agent, tool, "
            "web, file or system)",
        )
    return keyed.KeyWrite(
        key=req.key,
        content=content,
        source=source,
        if_version=req.if_version if req.HasField("if_version") else None,
        security_level=enum_value(req.security_level, SECURITY_LEVELS, "security_level"),
        namespace=req.namespace,
    )


def key_list_query_from(req: mpb.ListKeysRequest) -> keyed.KeyListQuery:
    """A ListKeys request as a query: prefix, recursion and paging."""
    return keyed.KeyListQuery(
        prefix=req.prefix,
        recursive=req.recursive,
        page_size=req.page_size or None,
        page_token=req.page_token,
        as_of=as_of_from(req),
    )


def key_history_query_from(req: mpb.KeyHistoryRequest) -> keyed.KeyHistoryQuery:
    """A KeyHistory request as a query: the key (or directory) and paging."""
    return keyed.KeyHistoryQuery(
        key=req.key, page_size=req.page_size or None, page_token=req.page_token
    )


# ---------------------------------------------------------------- responses


def key_entry_to_proto(entry: keyed.KeyEntry, out: mpb.KeyEntry | None = None) -> mpb.KeyEntry:
    """``entry`` as a wire KeyEntry (into ``out`` when given), its JSON text byte for byte."""
    msg = mpb.KeyEntry() if out is None else out
    msg.key = entry.key
    json_to_value(entry.content, msg.content)
    msg.valid = entry.valid
    msg.version = entry.version
    set_timestamp(msg.updated_at, entry.updated_at)
    if entry.source is not None:
        msg.source.kind = REVERSE_PROVENANCE_KINDS[entry.source.kind]  # type: ignore[assignment]
        msg.source.name = entry.source.name
        msg.source.locator = entry.source.locator
        set_timestamp(msg.source.retrieved_at, entry.source.retrieved_at)
    msg.security_level = _REVERSE_SECURITY_LEVELS[entry.security_level]  # type: ignore[assignment]
    msg.memory_id = entry.memory_id
    msg.namespace = entry.namespace
    msg.content_json = entry.content_json
    return msg


def set_memory_response(entry: keyed.KeyEntry) -> mpb.SetMemoryResponse:
    """The SetMemory response: the entry as written."""
    response = mpb.SetMemoryResponse()
    key_entry_to_proto(entry, response.entry)
    return response


def get_key_response(entry: keyed.KeyEntry) -> mpb.GetKeyResponse:
    """The GetKey response: the key's current entry."""
    response = mpb.GetKeyResponse()
    key_entry_to_proto(entry, response.entry)
    return response


def list_keys_response(listing: keyed.KeyListing) -> mpb.ListKeysResponse:
    """The ListKeys response: a page of keys and the directories below the prefix."""
    response = mpb.ListKeysResponse(
        directories=listing.directories, next_page_token=listing.next_page_token
    )
    add_each(response.entries, listing.entries, key_entry_to_proto)
    return response


def key_history_response(page: keyed.KeyHistoryPage) -> mpb.KeyHistoryResponse:
    """The KeyHistory response: a page of versions, oldest first."""
    response = mpb.KeyHistoryResponse(next_page_token=page.next_page_token)
    add_each(response.entries, page.entries, key_entry_to_proto)
    return response
