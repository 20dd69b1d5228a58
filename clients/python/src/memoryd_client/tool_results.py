"""Result shapes both tool surfaces build the same way (the daemon's MCP tools and the
client's dispatchers); like the tool table, nothing here imports protobuf or gRPC."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]

#: Tag (and provenance name) of the memories record_to_memory keeps.
RECORD_TAG = "record_to_memory"


def merged_hits(results: list[JSON]) -> JSON:
    """Recall results (``{"memories": [...], "degraded"?}``) merged: each memory once, at
    its best score, best first, and their contents as text, one line each."""
    best: dict[str, JSON] = {}
    degraded: dict[tuple[str, str], JSON] = {}
    for result in results:
        for hit in result["memories"]:
            kept = best.get(hit["id"])
            if kept is None or hit["score"] > kept["score"]:
                best[hit["id"]] = hit
        for d in result.get("degraded", ()):
            degraded.setdefault((d["component"], d["reason"]), d)
    ranked = sorted(best.values(), key=lambda h: -h["score"])
    out: JSON = {"memories": ranked, "text": "\n".join(f"- {h['content']}" for h in ranked)}
    if degraded:
        out["degraded"] = list(degraded.values())
    return out
