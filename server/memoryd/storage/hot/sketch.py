"""A low-dimensional sketch of a partition's vectors that rules out near neighbours
cheaply and exactly (used by HotPartition for ``search_many(min_similarity=)``).

A near-duplicate lookup asks, for each vector of a batch of new memories, which
stored vectors have a cosine similarity of at least ``cut``; almost none do. For unit
vectors ``q . x >= cut`` means ``|q - x|^2 <= 2 (1 - cut)``, and an orthonormal
projection ``P`` never lengthens a difference, ``|P(q - x)| <= |q - x|``. So every
stored vector above the cut also lies within that distance of the query in the
projected space: filtering there first loses nothing, and only the few pairs that
pass are scored exactly against the full vectors.

Each stored row is kept as ``[P x, -|P x|^2 / 2, 1]`` and each query becomes
``[P q, 1, -|P q|^2 / 2]``, so one matrix product of ``rank + 2`` columns (instead of
the full dimension) gives ``-|P(q - x)|^2 / 2`` for every pair.

``P`` holds the principal directions of a sample of the partition. Any orthonormal
``P`` keeps the filter exact; the principal ones spread the vectors apart the most,
so the fewest pairs pass (on MiniLM-like data at rank 64: 1.4e-4 of the pairs, and
the product plus its maximum takes ~30 ms where the full product takes ~85, for
1,000 queries against 20,000 rows).
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import numpy.typing as npt

from memoryd.storage.hot.rows import grown

F32 = npt.NDArray[np.float32]
Slots = npt.NDArray[np.intp]

#: Projected dimensions.
RANK = 64
#: Rows sampled to choose the directions.
FIT_SAMPLE = 4096
#: Slack on the squared projected distance: covers float32 rounding and vectors that
#: are unit length only to ~1e-5 (their squared distance can exceed 2 (1 - cut) by
#: ~4e-5), so a pair at the cut is never filtered out.
SLACK = 1e-3
#: Query rows per product block (a block of similarities stays within ~16 MB).
_BLOCK_CELLS = 4 * 2**20


class Sketch:
    """Projected rows for slots ``[0, capacity)``; rows of free slots are stale, so
    callers mask them out."""

    def __init__(self, basis: F32, capacity: int) -> None:
        self.basis = basis  # (rank, dimension), orthonormal rows
        self.rows: F32 = np.zeros((capacity, basis.shape[0] + 2), dtype=np.float32)
        #: Rows the basis was chosen from (the partition refits when it outgrows them).
        self.fitted_rows = 0

    @classmethod
    def fit(cls, vectors: F32, capacity: int, rng: np.random.Generator) -> Sketch:
        """A sketch whose directions are the principal ones of ``vectors``; rows are
        not filled (call ``put``)."""
        sample = vectors
        if len(vectors) > FIT_SAMPLE:
            sample = vectors[rng.choice(len(vectors), FIT_SAMPLE, replace=False)]
        centred = sample - sample.mean(axis=0)
        # The scatter in float32 (one fast product), its eigenvectors in float64: the
        # float32 basis is then orthonormal to ~1e-7, far inside SLACK.
        _, eigenvectors = np.linalg.eigh((centred.T @ centred).astype(np.float64))
        # eigh sorts ascending: the last columns are the principal directions.
        rank = min(RANK, vectors.shape[1])
        basis = np.ascontiguousarray(eigenvectors[:, ::-1][:, :rank].T, dtype=np.float32)
        sketch = cls(basis, capacity)
        sketch.fitted_rows = len(vectors)
        return sketch

    def nbytes(self) -> int:
        return int(self.rows.nbytes + self.basis.nbytes)

    def grow(self, capacity: int) -> None:
        self.rows = grown(self.rows, capacity)

    def put(self, slots: Slots, vectors: F32) -> None:
        projected = vectors @ self.basis.T
        self.rows[slots, :-2] = projected
        self.rows[slots, -2] = -0.5 * np.einsum("ij,ij->i", projected, projected)
        self.rows[slots, -1] = 1.0

    def candidates(
        self, queries: F32, n: int, mask: npt.NDArray[np.bool_], cut: float
    ) -> Iterator[tuple[int, Slots]]:
        """(query index, slots under ``mask``) for each query with any slot of
        ``[0, n)`` that may be at or above ``cut``: a superset of those that are."""
        projected = queries @ self.basis.T
        lifted = np.empty((len(queries), self.rows.shape[1]), dtype=np.float32)
        lifted[:, :-2] = projected
        lifted[:, -2] = 1.0
        lifted[:, -1] = -0.5 * np.einsum("ij,ij->i", projected, projected)
        bound = np.float32(-(1.0 - cut) - SLACK / 2)
        rows = self.rows[:n]
        block = max(1, _BLOCK_CELLS // max(n, 1))
        for start in range(0, len(queries), block):
            # -|P(q - x)|^2 / 2 for the block's queries against every row.
            half_distances = lifted[start : start + block] @ rows.T
            for j in np.flatnonzero(half_distances.max(axis=1) >= bound).tolist():
                cols = np.flatnonzero(half_distances[j] >= bound)
                cols = cols[mask[cols]]
                if len(cols):
                    yield start + j, cols
