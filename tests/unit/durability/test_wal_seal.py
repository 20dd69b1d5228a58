"""The log's part in an erasure (docs/erasure.md): ``seal`` ends the current segment
so every entry written so far may be dropped once checkpointed, and ``truncate`` with
no retention drops them, the change feed's retained segments included, while writes
made during and after the seal stay in the log and are replayed by a restart."""

from __future__ import annotations

import asyncio
from pathlib import Path

from memoryd.durability.wal import WriteAheadLog, read_segment

#: Far more than the test writes: every segment is kept for the change feed.
RETAIN = 64 * 2**20


def entries(directory: Path) -> list[tuple[int, bytes]]:
    wal = WriteAheadLog(directory)
    return sorted(e for _, path in wal.segments() for e in read_segment(path))


def test_seal_then_truncate_drops_every_checkpointed_entry_and_keeps_the_rest(
    tmp_path: Path,
) -> None:
    async def run() -> int:
        wal = WriteAheadLog(tmp_path, retain_bytes=RETAIN)
        wal.recover()
        wal.start()
        for i in range(5):
            await wal.submit(f"erased {i}".encode())[1]
        # Without a seal the current segment holds them: never dropped.
        assert wal.truncate(5, retain_bytes=0) == 0
        await asyncio.to_thread(wal.seal)
        # Writes made right after the seal, queued together (one group commit).
        later = [wal.submit(f"kept {i}".encode()) for i in range(3)]
        for _, done in later:
            await done
        assert wal.truncate(5) == 0  # the log's own retention keeps the segment
        assert wal.truncate(5, retain_bytes=0) == 1
        await wal.close()
        return later[0][0]

    first_kept = asyncio.run(run())
    kept = entries(tmp_path)
    assert [p for _, p in kept] == [b"kept 0", b"kept 1", b"kept 2"]
    assert kept[0][0] == first_kept == 6
    # A restart replays everything past the (unchanged) checkpoint that is left.
    wal = WriteAheadLog(tmp_path)
    assert [p for _, p in wal.recover()] == [p for _, p in kept]


def test_seal_with_the_racing_write_in_the_sealed_segment_keeps_that_segment(
    tmp_path: Path,
) -> None:
    async def run() -> None:
        wal = WriteAheadLog(tmp_path, retain_bytes=RETAIN)
        wal.recover()
        wal.start()
        for i in range(3):
            await wal.submit(f"erased {i}".encode())[1]
        await wal.submit(b"not yet applied")[1]  # seq 4, written before the seal
        await asyncio.to_thread(wal.seal)
        await wal.submit(b"after")[1]
        # Applied (checkpointed) through 3 only: seq 4 shares the sealed segment, so
        # that segment stays (durability of an unapplied write beats the erasure).
        assert wal.truncate(3, retain_bytes=0) == 0
        await wal.close()

    asyncio.run(run())
    assert [p for _, p in entries(tmp_path)][-2:] == [b"not yet applied", b"after"]
