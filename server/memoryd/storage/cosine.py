"""How a stored vector is scored against a query: the same float in every in-process
scorer (the hot cache, the in-process store).

A memory's similarity must not depend on what else is stored, or where its row sits:
an as-of read (an in-process store rebuilt from the history) and the live read (the
hot cache) must rank near-ties alike (docs/as-of.md). BLAS rounds a row's dot product
by its place in a block (a gemv or gemm kernel), so a single query is scored row by
row (:func:`cosines`); and a stored row is rescaled only when its norm is off 1 by
more than UNIT_TOLERANCE (:func:`stored_rows`): stored vectors are unit length
already, and rescaling those would change their last bits.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

F32 = npt.NDArray[np.float32]

#: Vectors whose norm is this close to 1 are kept as they are.
UNIT_TOLERANCE = 1e-5


def stored_rows(vectors: F32) -> F32:
    """``vectors`` (rows) as they are scored: each row as it is, unless its norm is
    off 1 by more than UNIT_TOLERANCE (then scaled to unit length); zero rows stay."""
    norms = np.linalg.norm(vectors, axis=1, keepdims=True)
    off = (np.abs(norms - 1) > UNIT_TOLERANCE) & (norms > 0)
    out: F32 = np.where(off, vectors / np.where(off, norms, 1), vectors).astype(np.float32)
    return out


def cosines(rows: F32, query: F32) -> F32:
    """The similarity of each of ``rows`` (stored_rows) to the unit ``query``, each
    row's dot product computed on its own (einsum), so its float depends on nothing
    but the two vectors."""
    out: F32 = np.einsum("ij,j->i", rows, query)
    return out
