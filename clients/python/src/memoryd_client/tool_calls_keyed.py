"""The client's calls for the keyed-memory tools (``set_memory``, ``get_memory_key``,
``list_memory_keys``, ``memory_key_history``, ``default_read``) and the ``memory`` file
tool's key reads and writes: the call each makes and how its answer becomes the tool's
result (:mod:`memoryd_client.tool_calls` dispatches to :data:`KEYED_PLANS`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from memoryd_client import requests as rq
from memoryd_client.errors import NotFoundError
from memoryd_client.memory_files import FileWrite, KeyFile
from memoryd_client.ops import keys, snapshot
from memoryd_client.results import KeyEntry, KeyListing, Page
from memoryd_client.tool_args import as_of_point
from memoryd_client.tool_plan import (
    JSON,
    LIST_PAGE,
    ToolPlan,
    iso_time,
    mapped,
    rfc3339_arg,
    source_json,
    source_pb,
)

if TYPE_CHECKING:
    from memoryd_client.aio import AsyncMemorydClient


def key_version(e: KeyEntry) -> JSON:
    """A key's entry (a version, or its deletion) as the keyed tools show it."""
    return {
        "key": e.key,
        "value": e.content if e.valid else None,
        "version": e.version,
        "deleted": not e.valid,
        "updated_at": iso_time(e.updated_at),
        "source": source_json(e.raw.source if e.raw.HasField("source") else None),
    }


def _set_memory(agent: str, args: Mapping[str, Any]) -> ToolPlan:
    source = source_pb(args["source"])  # required: check_arguments saw it
    assert source is not None
    call = keys.set_memory(
        agent,
        args["key"],
        args["value"],
        source=source,
        if_version=args.get("if_version"),
        security_level=args.get("security_level"),
    )
    return ToolPlan(
        mapped(
            call,
            lambda e: {
                "key": e.key,
                "version": e.version,
                "deleted": not e.valid,
                "memory_id": e.memory_id,
            },
        )
    )


def _get_key(agent: str, args: Mapping[str, Any]) -> ToolPlan:
    missing = {"found": False, "key": args["key"], "value": None, "version": 0, "deleted": False}
    return ToolPlan(
        mapped(
            keys.get_key(agent, args["key"], as_of=as_of_point(args)),
            lambda e: {"found": e.valid, **key_version(e)},
        ),
        missing,
    )


def _list_keys(agent: str, args: Mapping[str, Any]) -> ToolPlan:
    call = keys.list_keys(
        agent, args.get("prefix", "/"), recursive=args.get("recursive", False),
        page_size=args.get("limit", LIST_PAGE), as_of=as_of_point(args),
    )  # fmt: skip

    def render(listing: KeyListing) -> JSON:
        return {
            "keys": [key_version(e) for e in listing],
            "directories": list(listing.directories),
            "more": bool(listing.next_page_token),
        }

    return ToolPlan(mapped(call, render))


def _history(agent: str, args: Mapping[str, Any]) -> ToolPlan:
    call = keys.key_history(agent, args["key"], page_size=args.get("limit", LIST_PAGE))

    def render(page: Page[KeyEntry]) -> JSON:
        return {"versions": [key_version(e) for e in page], "more": bool(page.next_page_token)}

    return ToolPlan(mapped(call, render))


def _default_read(agent: str, args: Mapping[str, Any]) -> ToolPlan:
    when = args.get("current_time")
    call = snapshot.default_read(
        agent,
        token_limit=args.get("token_limit"),
        tags=args.get("tags", ()),
        prefix=args.get("prefix", ""),
        current_time=None if when is None else rfc3339_arg(when, "current_time"),
        as_of=as_of_point(args),
    )
    return ToolPlan(
        mapped(
            call,
            lambda r: {
                "text": r.text,
                "keys": [line.key for line in r.lines],
                "tokens_used": r.tokens_used,
            },
        )
    )


KEYED_PLANS: dict[str, Callable[[str, Mapping[str, Any]], ToolPlan]] = {
    "set_memory": _set_memory,
    "get_memory_key": _get_key,
    "list_memory_keys": _list_keys,
    "memory_key_history": _history,
    "default_read": _default_read,
}


class ClientFiles:
    """The memory file tool's key calls over an async client."""

    def __init__(self, client: AsyncMemorydClient, agent: str) -> None:
        self._client, self._agent = client, agent

    async def read(self, key: str) -> KeyFile | None:
        try:
            entry = await self._client.run(keys.get_key(self._agent, key))
        except NotFoundError:
            return None
        if not entry.valid:
            return None
        if isinstance(entry.content, str):
            return KeyFile(entry.content, entry.version)
        return KeyFile(entry.content_json, entry.version, is_json=True)

    async def write(self, key: str, file: FileWrite) -> int:
        source = {"kind": "agent", "name": "memory tool"}
        content = rq.JsonText(file.text) if file.is_json and file.text is not None else file.text
        call = keys.set_memory(self._agent, key, content, source=source, if_version=file.if_version)
        entry: KeyEntry = await self._client.run(call)
        return entry.version

    async def keys(self, prefix: str) -> list[str]:
        out: list[str] = []
        token = ""
        while True:
            listing = await self._client.run(
                keys.list_keys(
                    self._agent, prefix, recursive=True, page_size=LIST_PAGE, page_token=token
                )
            )
            out.extend(e.key for e in listing if e.valid)
            token = listing.next_page_token
            if not token:
                return sorted(out)
