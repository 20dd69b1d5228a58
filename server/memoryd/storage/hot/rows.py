"""How a memory is held by the hot cache's columns: its stored form, the size estimate
the budget counts, and the one way every hot column grows (the partition's, the text
index's, the int8 copy's, the sketch's). Times are microseconds (storage/instants.py)."""

from __future__ import annotations

import json
from typing import Any, TypeVar, cast

import numpy as np
import numpy.typing as npt

from memoryd.domain.models import Memory, Provenance, ProvenanceKind, TrustFilter
from memoryd.storage.checks import utc_copy

F32 = npt.NDArray[np.float32]

#: Rough bytes of one cached Memory object besides its strings (the dataclass, its
#: datetimes, tuple, dict, the id->slot entry); measured with tracemalloc at ~900 B.
OBJECT_OVERHEAD = 900

#: Provenance kinds by their code in the partition's source column; 0 is none.
_SOURCE_CODE = {k: i + 1 for i, k in enumerate(ProvenanceKind)}

_A = TypeVar("_A", bound=np.ndarray[Any, Any])


def source_code(source: Provenance | None) -> int:
    """A memory's provenance kind as the source column holds it."""
    return 0 if source is None else _SOURCE_CODE[ProvenanceKind(source.kind)]


def trust_codes(trust: TrustFilter) -> list[int]:
    """The source column's codes ``trust`` admits."""
    return [_SOURCE_CODE[k] for k in trust.kinds] + ([0] if trust.unattributed else [])


def stored_form(m: Memory) -> Memory:
    """``m`` as a durable store returns it: UTC datetimes, JSON metadata, no vector."""
    out = utc_copy(m)
    out.vector = None
    out.tags = tuple(m.tags)
    out.metadata_json = m.metadata_text()
    out.metadata = json.loads(out.metadata_json) if m.metadata else {}
    return out


def object_bytes(m: Memory) -> int:
    """Estimated bytes of a cached Memory: fixed overhead plus its variable parts."""
    extra = len(m.content) + len(m.id) + sum(len(t) + 56 for t in m.tags)
    if m.metadata:
        extra += 64 * len(m.metadata) + len(str(m.metadata))
    return OBJECT_OVERHEAD + extra


def grown(a: _A, capacity: int, fill: float | bool = 0) -> _A:
    """``a`` copied into an array of ``capacity`` rows, the new rows set to ``fill``."""
    shape = (capacity, *a.shape[1:])
    # zeros, not full(0): the kernel hands out zeroed pages without writing them.
    out = np.zeros(shape, dtype=a.dtype) if fill == 0 else np.full(shape, fill, dtype=a.dtype)
    out[: len(a)] = a
    return cast(_A, out)
