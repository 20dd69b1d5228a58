"""Handing the C heap's free memory back to the system."""

from __future__ import annotations

import contextlib
import ctypes


def release_free_heap() -> bool:
    """Return the free pages of glibc's malloc arenas to the system (``malloc_trim``).

    Start-up frees much of what it allocates (onnxruntime optimising the model's graph,
    LanceDB opening its tables), but glibc keeps freed memory for later allocations, so
    it stays in the daemon's RSS. Called once the daemon serves; False where there is no
    glibc."""
    with contextlib.suppress(OSError, AttributeError):
        return bool(ctypes.CDLL("libc.so.6").malloc_trim(0))
    return False
