"""Which embedding model a data directory's vectors come from.

Vectors of two models are not comparable, even at the same dimension (MiniLM and
multilingual-e5 are both 384): a daemon restarted with another embedder would rank
old memories by meaningless similarities, silently. The data directory records the
model in ``embedding-space.json`` on first start; a later start with another model
refuses, unless the operator allows the change (and then re-embeds: ``memoryctl
reembed``, which gives every memory of another model this daemon's embedding).

The hashing fallback's own space is tracked per memory (``embedding_model``) and
kept apart by the resilience layer; this file is about the configured model only.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

MANIFEST = "embedding-space.json"


class EmbeddingSpaceChanged(RuntimeError):
    """The configured embedder is not the one the stored vectors were made with."""


@dataclass(frozen=True, slots=True)
class Space:
    model: str
    dimension: int


def recorded_space(data_dir: Path) -> Space | None:
    """The space recorded in ``data_dir``; None when nothing (readable) is recorded."""
    try:
        raw = json.loads((data_dir / MANIFEST).read_text())
        return Space(model=str(raw["model"]), dimension=int(raw["dimension"]))
    except FileNotFoundError:
        return None
    except (OSError, ValueError, KeyError, TypeError) as exc:
        log.warning("embedding space record unreadable; rewritten", error=str(exc))
        return None


def record_space(data_dir: Path, space: Space) -> None:
    """Write the record atomically (a torn file would stop the next start)."""
    data_dir.mkdir(parents=True, exist_ok=True)
    tmp = data_dir / f"{MANIFEST}.tmp"
    with open(tmp, "w") as handle:
        json.dump(asdict(space), handle)
        handle.flush()
        os.fsync(handle.fileno())
    tmp.replace(data_dir / MANIFEST)


def check_space(
    data_dir: Path, space: Space, *, allow_change: bool, absorbed: str | None = None
) -> None:
    """Record ``space`` on first start; raise EmbeddingSpaceChanged when another one
    is recorded, unless ``allow_change`` (then the new one is recorded, loudly).

    ``absorbed``: a model whose memories this daemon keeps apart and re-embeds by
    itself (the hashing fallback's: resilience/embedder.py); moving from it to
    ``space`` at the same dimension is not a conflict."""
    recorded = recorded_space(data_dir)
    if recorded == space:
        return
    fallback = Space(absorbed, space.dimension) if absorbed is not None else None
    if recorded is not None and recorded == fallback:
        log.info(
            "memories of the hashing embedder are re-embedded in the background",
            was=recorded.model,
            now=space.model,
        )
    elif recorded is not None:
        if not allow_change:
            raise EmbeddingSpaceChanged(
                f"the memories in {data_dir} were embedded by {recorded.model} "
                f"({recorded.dimension} dimensions) and the configured embedder is "
                f"{space.model} ({space.dimension}): their vectors are not comparable, "
                "so recall would silently degrade. Configure the previous embedder again, "
                "or allow the change (embedding.allow_model_change: true, "
                "MEMORYD_EMBEDDING__ALLOW_MODEL_CHANGE=true) and run "
                "`memoryctl reembed --all-agents` for each tenant."
            )
        log.warning(
            "embedding model changed; vector recall mixes the two models until "
            "`memoryctl reembed --all-agents` has run for each tenant",
            was=recorded.model,
            now=space.model,
        )
    record_space(data_dir, space)
