"""The hot cache's usearch and the local model's onnxruntime load in either order.

usearch's extension links libstdc++ statically; imported first, it made a later
onnxruntime import crash the process (SIGSEGV in std::locale). memoryd.storage loads
the shared libstdc++ first. A crash cannot be caught in-process: each order runs in
a subprocess and must exit 0.
"""

from __future__ import annotations

import subprocess
import sys

import pytest

ORDERS = {
    "hot cache, then the local model": (
        "import memoryd.storage.hot.cache; import memoryd.embedding.local"
    ),
    "the local model, then the hot cache": (
        "import memoryd.embedding.local; import memoryd.storage.hot.cache"
    ),
    "the daemon": "import memoryd.app; import memoryd.embedding.local",
}


@pytest.mark.parametrize("code", ORDERS.values(), ids=ORDERS.keys())
def test_either_import_order_loads(code: str) -> None:
    done = subprocess.run(
        [sys.executable, "-c", f"{code}; print('loaded')"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "loaded"
