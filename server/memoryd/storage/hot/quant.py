"""An int8 copy of a hot partition's vectors that narrows an exact top-k search to a
few candidates with a quarter of the memory traffic (used by HotPartition for
single-query searches of big partitions).

A 10k x 384 float32 matrix is 15 MB: a recall's matrix-vector product streams it from
memory (it does not stay in cache between requests) and is bound by bandwidth, not
arithmetic. The same rows as int8 are 3.75 MB, and their products with an int8 query
run ~3x faster (numkong's SIMD kernels, exact integer sums).

The int8 scores are not the answer; they are bounds on it. Each row ``x`` is stored
as codes ``c`` with a scale ``s`` (``x ~ s c``, rounding error ``e = x - s c``), the
query likewise (``q ~ s_q c_q``, error ``e_q``). Then exactly

    q . x = s_q s (c_q . c) + q . e + e_q . (s c)

and by Cauchy-Schwarz the last two terms are at most ``|e| + |e_q| |s c|`` for a unit
query: at most ``E = max |e| + |e_q| max |s c|`` over the rows. Every row's
similarity lies within its estimate +- E, so the k-th largest estimate minus E is a
floor under the true k-th similarity, and a row whose estimate is below that floor
minus E is out of the top k, and out of any tie with its k-th: the filter is exact.
Only the survivors (typically tens) are scored on the float32 rows, as a full product
would score them.
"""

from __future__ import annotations

import numkong
import numpy as np
import numpy.typing as npt

from memoryd.storage.hot.rows import grown

F32 = npt.NDArray[np.float32]
Slots = npt.NDArray[np.intp]

_CODE_MAX = 127
#: Absolute slack on every bound: the float32 rounding of the products and scales
#: (~1e-7) and of the exact re-rank's own sums (~1e-6), with a wide margin.
SLACK = 1e-4


def quantize(vectors: F32) -> tuple[npt.NDArray[np.int8], F32, F32, F32]:
    """Codes, scales, rounding-error norms and reconstructed norms of ``vectors``'
    rows (a zero row gets scale 0 and zero codes)."""
    peak = np.abs(vectors).max(axis=1)
    scale = (peak / _CODE_MAX).astype(np.float32)
    safe = np.where(scale > 0, scale, 1.0).astype(np.float32)
    codes = np.rint(vectors / safe[:, None]).astype(np.int8)
    rebuilt = codes.astype(np.float32) * scale[:, None]
    error = np.linalg.norm(vectors - rebuilt, axis=1).astype(np.float32)
    length = np.linalg.norm(rebuilt, axis=1).astype(np.float32)
    return codes, scale, error, length


def quantize_query(query: F32) -> tuple[npt.NDArray[np.int8], float, float]:
    """``quantize`` for one vector, without the batch's array overheads (every
    search pays it): codes, scale and rounding-error norm."""
    scale = float(max(query.max(), -query.min())) / _CODE_MAX
    if not scale > 0:
        return np.zeros(len(query), dtype=np.int8), 0.0, float(np.linalg.norm(query))
    codes = np.rint(query * np.float32(1 / scale)).astype(np.int8)
    error = query - codes * np.float32(scale)
    return codes, scale, float(np.sqrt(error @ error))


class Quantized:
    """int8 rows for slots ``[0, capacity)``; rows of free slots are stale, so
    callers mask them out."""

    def __init__(self, dimension: int, capacity: int) -> None:
        self.codes = np.zeros((capacity, dimension), dtype=np.int8)
        self.scale = np.zeros(capacity, dtype=np.float32)
        #: The largest rounding-error norm and reconstructed norm of any row written
        #: (never lowered when a row goes: an over-estimate only keeps more rows).
        self.max_error = 0.0
        self.max_length = 0.0

    def nbytes(self) -> int:
        return int(self.codes.nbytes + self.scale.nbytes)

    def grow(self, capacity: int) -> None:
        self.codes = grown(self.codes, capacity)
        self.scale = grown(self.scale, capacity)

    def put(self, slots: Slots, vectors: F32) -> None:
        codes, scale, error, length = quantize(vectors)
        self.codes[slots] = codes
        self.scale[slots] = scale
        if len(slots):
            self.max_error = max(self.max_error, float(error.max()))
            self.max_length = max(self.max_length, float(length.max()))

    def bounds(self, query: F32, n: int) -> tuple[F32, float]:
        """For slots ``[0, n)``: the int8 estimate of each row's similarity to the
        unit ``query``, and the bound E on every estimate's error."""
        codes, q_scale, q_error = quantize_query(query)
        scores = np.empty((1, n), dtype=np.float32)
        numkong.cdist(
            codes[None, :], self.codes[:n], metric="dot", threads=1, out=scores,
            out_dtype="float32",
        )  # fmt: skip
        estimate = scores[0]
        estimate *= self.scale[:n]
        estimate *= np.float32(q_scale)
        return estimate, self.max_error + q_error * self.max_length + SLACK

    def candidates(
        self,
        query: F32,
        n: int,
        mask: npt.NDArray[np.bool_] | None,
        k: int,
        at_least: float | None = None,
    ) -> Slots:
        """Slots of ``[0, n)`` under ``mask`` (None: every slot is live and passes)
        that may be among the ``k`` most similar to the unit ``query``: a
        superset of the exact top k and of every row tied with its k-th. ``mask``
        must keep at least ``k`` slots. With ``at_least``, also only the rows that may
        reach that similarity (a near-duplicate lookup: usually none)."""
        estimate, bound = self.bounds(query, n)
        if mask is not None:
            estimate[~mask] = -np.inf
        floor = np.partition(estimate, n - k)[n - k] - 2 * bound
        if at_least is not None:
            floor = max(floor, at_least - bound)
        return np.flatnonzero(estimate >= floor)
