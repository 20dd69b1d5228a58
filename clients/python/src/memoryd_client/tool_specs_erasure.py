"""The erasure tools of the tool table (admin only; docs/erasure.md): ``erase`` and
``verify_erasure``, and the JSON results both tool surfaces build alike. Nothing here
imports protobuf or gRPC (the daemon imports it too)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from memoryd_client.tool_spec import AGENT, BOOL, INT, STR, ToolSpec, out

JSON = dict[str, Any]
#: The tools that erase or check an erasure: admin only, never in a model's default set.
ERASURE_TOOLS = ("erase", "verify_erasure")

_ERASED = out(
    {
        "places": {
            "type": "object",
            "additionalProperties": INT,
            "description": "Every place checked, with the count removed (or that would be).",
        },
        "ids": {"type": "array", "items": STR},
        "digest": {"type": "string", "description": "sha256 over the ids and the places."},
        "dry_run": BOOL,
    },
    "places",
    "ids",
    "digest",
    "dry_run",
)
_CHECKED = out(
    {
        "files_scanned": INT,
        "bytes_scanned": INT,
        "residue": {
            "type": "array",
            "items": out({"path": STR, "needle": INT, "count": INT}, "path", "needle", "count"),
        },
        "skipped": {"type": "array", "items": STR},
    },
    "files_scanned",
    "bytes_scanned",
    "residue",
    "skipped",
)

ERASURE_SPECS = [
    ToolSpec(
        "erase",
        "Erase (admin)",
        "Admin only: erase beyond recovery, with a receipt, an agent's whole memory "
        "(whole_agent), memories by id, its keys under a key_prefix, or everything "
        "holding a subject (of every agent of the tenant with all_agents). dry_run "
        "reports and changes nothing.",
        {
            "whole_agent": BOOL,
            "ids": {"type": "array", "items": {"type": "string", "minLength": 1}},
            "subject": {"type": "string", "minLength": 3},
            "key_prefix": {"type": "string", "description": "A key directory: /people/"},
            "all_agents": BOOL,
            "dry_run": BOOL,
            "agent_id": AGENT,
        },
        (),
        _ERASED,
        destructive=True,
        idempotent=True,
    ),
    ToolSpec(
        "verify_erasure",
        "Verify an erasure (admin)",
        "Admin only: scan the daemon's data files for strings that must be gone (an erased "
        "text, an id, an email address); answers file names and counts, never content.",
        {
            "needles": {
                "type": "array",
                "minItems": 1,
                "maxItems": 100,
                "items": {"type": "string", "minLength": 1},
            },
            "agent_id": AGENT,
        },
        ("needles",),
        _CHECKED,
        read_only=True,
        idempotent=True,
    ),
]


def erased_json(places: Mapping[str, int], ids: Iterable[str], digest: str, dry_run: bool) -> JSON:
    """An Erase receipt as the ``erase`` tool's result."""
    return {"places": dict(places), "ids": list(ids), "digest": digest, "dry_run": dry_run}


def checked_json(
    files_scanned: int,
    bytes_scanned: int,
    residue: Iterable[tuple[str, int, int]],
    skipped: Iterable[str],
) -> JSON:
    """A VerifyErasure answer as the ``verify_erasure`` tool's result."""
    return {
        "files_scanned": files_scanned,
        "bytes_scanned": bytes_scanned,
        "residue": [{"path": p, "needle": n, "count": c} for p, n, c in residue],
        "skipped": list(skipped),
    }
