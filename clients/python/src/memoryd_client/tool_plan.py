"""What a tool call is on the wire (:class:`ToolPlan`) and the pieces every tool's plan
is made of: a call's answer mapped to the tool's JSON, times, provenance and
degradations as the tool table writes them (:mod:`memoryd_client.tool_calls` and
:mod:`memoryd_client.tool_calls_keyed` build the plans from these)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from memoryd_client import requests as rq
from memoryd_client.core import Unary
from memoryd_client.errors import MemorydError
from memoryd_client.results import Degradation
from memoryd_client.tool_args import parse_source
from memoryd_client.tool_table import ToolArgumentError
from memoryd_client.wire_values import locator_json
from memoryd_proto.v1 import common_pb2

JSON = dict[str, Any]
#: The page size a listing tool reads (its ``limit`` may ask for fewer).
LIST_PAGE = 200


@dataclass(frozen=True, slots=True)
class ToolPlan:
    """The call a tool makes; ``missing`` is the result when it answers NOT_FOUND. A
    tool of several calls has them in ``rest`` too, and ``combine`` makes its result
    from each call's, in order."""

    call: Unary[JSON]
    missing: JSON | None = None
    rest: tuple[Unary[JSON], ...] = ()
    combine: Callable[[list[JSON]], JSON] | None = None

    @property
    def calls(self) -> tuple[Unary[JSON], ...]:
        return (self.call, *self.rest)

    def result(self, results: list[JSON]) -> JSON:
        return self.combine(results) if self.combine is not None else results[0]


def iso_time(value: datetime | None) -> str | None:
    """``value`` as RFC 3339 in UTC (``Z``), or None."""
    return value.astimezone(UTC).isoformat().replace("+00:00", "Z") if value else None


def with_degraded(result: JSON, items: tuple[Degradation, ...]) -> JSON:
    """``result`` with its ``degraded`` list when anything was degraded."""
    if items:
        result["degraded"] = [{"component": d.component, "reason": d.reason} for d in items]
    return result


def source_pb(value: Any) -> common_pb2.Provenance | None:
    """A tool's ``source`` argument as the wire's Provenance (None when absent)."""
    parsed = parse_source(value)
    if parsed is None:
        return None
    source = common_pb2.Provenance(
        kind=common_pb2.ProvenanceKind.Value(f"PROVENANCE_KIND_{parsed['kind'].upper()}"),  # type: ignore[arg-type]
        name=str(parsed.get("name", "")),
        locator=rq.locator_wire(parsed.get("locator", "")),
    )
    stamp = parsed.get("retrieved_at")
    if stamp:
        try:
            when = datetime.fromisoformat(str(stamp).replace("Z", "+00:00"))
        except ValueError:
            raise ToolArgumentError("source.retrieved_at", "must be an RFC 3339 time") from None
        source.retrieved_at.FromDatetime(when.astimezone(UTC))
    return source


def rfc3339_arg(text: str, field: str) -> datetime:
    """Tool argument ``field`` as a time; ToolArgumentError names it when it is not one."""
    try:
        return rq.rfc3339(text, field)
    except MemorydError as exc:
        raise ToolArgumentError(field, "must be an RFC 3339 time with a time zone") from exc


def source_json(raw: common_pb2.Provenance | None) -> JSON | None:
    """A stored Provenance as the tool table's ``source`` object (None when unset)."""
    if raw is None or raw.kind == 0:
        return None
    out: JSON = {
        "kind": common_pb2.ProvenanceKind.Name(raw.kind).removeprefix("PROVENANCE_KIND_").lower(),
        "name": raw.name,
        "locator": locator_json(raw.locator),
    }
    if raw.HasField("retrieved_at"):
        out["retrieved_at"] = iso_time(raw.retrieved_at.ToDatetime(UTC))
    return out


def mapped(call: Unary[Any], render: Callable[[Any], JSON]) -> Unary[JSON]:
    """``call`` with its parsed answer rendered as the tool's JSON by ``render``."""
    return Unary(
        call.service,
        call.method,
        call.request,
        lambda r: render(call.parse(r)),
        idempotent=call.idempotent,
    )
