"""memoryd: an agent-memory daemon serving gRPC Memory, Snapshot and Lifecycle services."""

import os

# OpenBLAS (numpy's BLAS) keeps its worker threads spinning ~0.1 s after each threaded
# product, and a RememberBatch's duplicate check runs one per batch: measured on 2
# cores, the spinning thread burned 1.5 s of CPU per 20k memories that LanceDB and the
# event loop needed (RememberBatch 5,600 -> 6,100/s without it). OpenBLAS reads the
# setting once, when numpy loads it, so it is set before anything imports numpy; an
# operator's own value wins.
os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "4")

# Before anything imports lancedb: skip its REST client's import-time validators and
# its override checks (see lance_imports.py: most of lancedb's import time, for a
# client memoryd never uses and a check Python 3.12+ does not run either).
from memoryd.lance_imports import defer_rest_client_init, skip_override_checks

defer_rest_client_init()
skip_override_checks()

__version__ = "0.1.0"
