"""Handing freed heap memory back: what glibc keeps after a free, release_free_heap
returns (the daemon calls it once it serves; start-up frees a lot)."""

from __future__ import annotations

from pathlib import Path

from memoryd.heap import release_free_heap

BLOCK = 64 * 1024  # below glibc's mmap threshold: allocated on the heap
BLOCKS = 1600  # 100 MiB


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    raise AssertionError("no VmRSS")


def test_freed_heap_memory_goes_back_to_the_system() -> None:
    blocks = [bytearray(b"x" * BLOCK) for _ in range(BLOCKS)]
    # Every other block freed: holes in the middle of the heap, which glibc's own
    # trimming (only the heap's top) never returns.
    del blocks[::2]
    kept = rss_mib()
    assert release_free_heap()
    released = kept - rss_mib()
    assert released > BLOCKS // 2 * BLOCK / 2**20 * 0.8, f"{released:.1f} MiB released"
    assert len(blocks) == BLOCKS // 2  # the live half is untouched
