"""Shared pieces of memoryctl's commands: option types, the client session, error output."""

from __future__ import annotations

import copy
import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Annotated, Any, Protocol

import grpc
import typer
from google.protobuf.message import Message
from typer.core import TyperGroup

from memoryd.cli import render
from memoryd.domain.models import MemoryType
from memoryd_client import JsonText, MemorydClient, MemorydError
from memoryd_client.requests import MEMORY_TYPES
from memoryd_client.target import ADDRESS_ENV
from memoryd_client.transport import API_KEY_ENV

AGENT_ENV = "MEMORYD_AGENT"
TIMEOUT_ENV = "MEMORYD_TIMEOUT"


@dataclass(frozen=True)
class Globals:
    address: str
    timeout: float

    def client(self) -> MemorydClient:
        return MemorydClient(self.address, timeout=self.timeout)


AgentOption = Annotated[
    str,
    typer.Option(
        "--agent",
        "-A",
        envvar=AGENT_ENV,
        show_envvar=True,
        help="The agent whose memory to use.",
    ),
]
#: The agent of a command that may instead cover the whole tenant (--all-agents).
OneAgentOption = Annotated[str, typer.Option("--agent", "-A", envvar=AGENT_ENV, help="The agent.")]
AllAgentsOption = Annotated[
    bool, typer.Option("--all-agents", help="Every agent of the tenant (admin).")
]
JsonOption = Annotated[
    bool, typer.Option("--json", help="Print the response as protobuf JSON (for scripts).")
]
WideOption = Annotated[bool, typer.Option("--wide", "-w", help="Show full memory ids.")]
#: The namespace a write goes into.
WriteNamespaceOption = Annotated[str, typer.Option("--namespace", "-n", help="Namespace.")]
SessionArg = Annotated[str, typer.Argument(metavar="SESSION_ID", help="The session's id.")]
NamespaceOption = Annotated[
    str | None, typer.Option("--namespace", "-n", help="Only this namespace (default: all).")
]
TagsOption = Annotated[
    list[str] | None,
    typer.Option(
        "--tag",
        "-t",
        metavar="TAG",
        help="Only memories with this tag (repeat for any of several).",
    ),
]
TypesOption = Annotated[
    list[MemoryType] | None,
    typer.Option(
        "--type",
        metavar="TYPE",
        help="Only memories of this type (repeatable): " + ", ".join(MEMORY_TYPES) + ".",
    ),
]


def globals_of(ctx: typer.Context) -> Globals:
    obj = ctx.find_root().obj
    assert isinstance(obj, Globals)
    return obj


def fail(lines: list[str]) -> None:
    for line in lines:
        typer.echo(line, err=True)
    raise typer.Exit(1)


def error_lines(error: MemorydError, address: str) -> list[str]:
    if error.code == grpc.StatusCode.UNAVAILABLE and not error.request_id:
        # No request id: the call never reached memoryd's own code, so nothing listens there.
        return [
            f"error: {error.code_name}: no memoryd daemon answers at {address}",
            f"  ({error.message})",
            "  start one with `make run` in the memoryd checkout (or `memoryd serve`),",
            f"  or point --address / ${ADDRESS_ENV} at a running daemon",
        ]
    if error.code == grpc.StatusCode.UNAUTHENTICATED:
        return [
            f"error: {error.code_name}: {error.message}",
            f"  the daemon wants an API key: export {API_KEY_ENV}=<your key>"
            + (
                " (it is set, but not to a key the daemon knows)"
                if os.environ.get(API_KEY_ENV)
                else ""
            ),
        ]
    lines = [f"error: {error.code_name}: {error.message}"]
    lines += [f"  {v.field}: {v.description}" for v in error.field_violations]
    if error.request_id:
        lines.append(f"  (request id {error.request_id})")
    return lines


@contextmanager
def session(ctx: typer.Context) -> Iterator[MemorydClient]:
    """A client for the command; MemorydError becomes the error output and exit 1."""
    g = globals_of(ctx)
    try:
        with g.client() as client:
            yield client
    except MemorydError as exc:
        fail(error_lines(exc, g.address))


class MemoryctlGroup(TyperGroup):
    """memoryctl's root group: a MemorydError that escapes a command (a request builder
    that refuses an argument before any call, such as ``--limit 0``) is reported like
    one from the daemon (the error lines, exit 1), never as a bare traceback."""

    # Any: the Context type is typer's vendored click (typer._click), not public.
    def invoke(self, ctx: Any) -> Any:
        try:
            return super().invoke(ctx)
        except MemorydError as exc:
            obj = ctx.obj
            fail(error_lines(exc, obj.address if isinstance(obj, Globals) else ""))


#: Picks the stub method of an RPC from a client: ``lambda c: c.memory.GetKey``.
Stub = Callable[[MemorydClient], Callable[..., Any]]


def unary(
    ctx: typer.Context,
    stub: Stub,
    request: Message,
    as_json: bool,
    *,
    timeout: float | None = None,
) -> Any:
    """Send ``request`` to the RPC ``stub`` picks and return the response, having
    warned on stderr about what it was served degraded by. With ``--json`` the response
    is printed as JSON instead and the command ends here (``typer.Exit``, status 0):
    every caller renders the response it gets, none of them has more to do."""
    with session(ctx) as client:
        response = client.call(stub(client), request, timeout=timeout)
    if as_json:
        render.print_json(response)
        raise typer.Exit()
    if "degraded" in response.DESCRIPTOR.fields_by_name:
        render.warn_degraded(response.degraded)
    return response


def pages(
    client: MemorydClient,
    method: Callable[..., Any],
    request_for: Callable[[str], Message],
    *,
    token: str = "",
    follow: bool = True,
) -> Iterator[Any]:
    """The pages of a listing: ``request_for(page_token)`` sent to ``method`` from
    ``token`` on, while a page names a next one (only the first page unless ``follow``)."""
    while True:
        response = client.call(method, request_for(token))
        yield response
        token = response.next_page_token
        if not follow or not token:
            return


class ListingRequest(Protocol):
    """A listing's request: each one names the page it continues from."""

    page_token: str


def joined_pages(
    ctx: typer.Context,
    method_of: Callable[[MemorydClient], Callable[..., Any]],
    field: str,
    first: ListingRequest,
    *,
    follow: bool = True,
) -> Any:
    """A listing's :func:`pages` as one response: the last page, its repeated ``field``
    holding the items of every page (so its next_page_token says whether more remain).
    The pages are asked for from the request ``first`` on, each next request being
    ``first`` with the next page's token."""

    def request_for(token: str) -> Any:
        request = copy.deepcopy(first)
        request.page_token = token
        return request

    items: list[Any] = []
    with session(ctx) as client:
        for response in pages(
            client, method_of(client), request_for, token=first.page_token, follow=follow
        ):
            items.extend(getattr(response, field))
    joined = getattr(response, field)
    del joined[:]
    joined.extend(items)
    return response


def parse_metadata(raw: str | None) -> JsonText | None:
    """``--metadata`` as typed (checked): the daemon stores the text, 1.50 stays 1.50."""
    if raw is None:
        return None
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as exc:
        raise typer.BadParameter(f"not valid JSON: {exc}", param_hint="--metadata") from None
    if not isinstance(value, dict):
        raise typer.BadParameter("must be a JSON object", param_hint="--metadata")
    return JsonText(raw)
