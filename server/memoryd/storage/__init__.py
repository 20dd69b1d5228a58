"""Storage backends behind one protocol (:class:`Store`)."""

import contextlib
import ctypes

# usearch's extension (the hot cache's graph) carries its own static libstdc++. When it
# is the first C++ library in the process, a later onnxruntime import (the local model)
# crashes in std::locale (SIGSEGV in std::codecvt<char16_t>::do_unshift; onnxruntime
# 1.31, usearch 2.26). Loading the shared libstdc++ globally first avoids it; this
# package is imported before any module that imports usearch.
with contextlib.suppress(OSError):  # not a glibc system: nothing to preload
    ctypes.CDLL("libstdc++.so.6", mode=ctypes.RTLD_GLOBAL)

from memoryd.storage.base import Store
from memoryd.storage.records import RecordStore
from memoryd.storage.registry import BACKENDS, RECORD_BACKENDS, build_record_store, build_store

__all__ = [
    "BACKENDS",
    "RECORD_BACKENDS",
    "RecordStore",
    "Store",
    "build_record_store",
    "build_store",
]
