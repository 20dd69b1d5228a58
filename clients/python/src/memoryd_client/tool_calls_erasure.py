"""The client's calls for the erasure tools (``erase``, ``verify_erasure``; admin only):
the lifecycle call each makes and how its answer becomes the tool's result, the same
JSON the MCP tools answer (memoryd_client.tool_specs_erasure)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from memoryd_client.core import Unary
from memoryd_client.ops import lifecycle
from memoryd_client.tool_specs_erasure import JSON, checked_json, erased_json


def erasure_plan(
    agent: str, name: str, args: Mapping[str, Any]
) -> tuple[Unary[Any], Callable[[Any], JSON]]:
    """The call tool ``name`` (one of ERASURE_TOOLS) makes, and its result's renderer."""
    if name == "verify_erasure":
        return lifecycle.verify_erasure(args["needles"]), _checked
    call = lifecycle.erase(
        agent,
        ids=args.get("ids", ()),
        whole_agent=args.get("whole_agent", False),
        subject=args.get("subject", ""),
        dry_run=args.get("dry_run", False),
        key_prefix=args.get("key_prefix", ""),
        all_agents=args.get("all_agents", False),
    )
    return call, _erased


def _erased(receipt: lifecycle.Erased) -> JSON:
    return erased_json(receipt.places, receipt.ids, receipt.digest, receipt.dry_run)


def _checked(check: lifecycle.ErasureCheck) -> JSON:
    residue = ((r.path, r.needle, r.count) for r in check.residue)
    return checked_json(check.files_scanned, check.bytes_scanned, residue, check.skipped)
