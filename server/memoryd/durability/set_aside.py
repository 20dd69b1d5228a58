"""Logged writes set aside on replay: list them, and put them back in the log.

A replay that the store rejects as invalid keeps the entry's payload next to the log
(``<wal_dir>/rejected-<seq>.bin``, see ``DurableStore.open``) because the log does not
say whether the write was answered. Once the cause is fixed (a configuration put back,
a bug fixed), :func:`requeue` appends those payloads to the log as new entries, so the
daemon's next start replays them like any other write; one still rejected is set aside
again under its new sequence number.

Both run with the daemon stopped (the caller holds the data dir's lock): the log has
one writer.
"""

from __future__ import annotations

import contextlib
from dataclasses import asdict, dataclass, field
from pathlib import Path

from memoryd.durability.ops import Op, decode
from memoryd.durability.wal import REJECTED_PREFIX, WriteAheadLog, fsync_dir

#: Ids or keys listed per operation in a summary (the count is always given).
MAX_LISTED = 20


@dataclass(frozen=True, slots=True)
class OpSummary:
    kind: str
    tenant: str
    agent: str
    #: Memory ids (upsert, delete) or record keys (put_records, delete_records).
    targets: tuple[str, ...]
    count: int


@dataclass(frozen=True, slots=True)
class SetAsideEntry:
    seq: int
    path: Path
    payload: bytes = field(repr=False)
    ops: tuple[OpSummary, ...]
    #: Why the payload could not be decoded (then ``ops`` is empty).
    error: str = ""

    @property
    def size(self) -> int:
        return len(self.payload)

    def as_dict(self) -> dict[str, object]:
        out: dict[str, object] = {
            "seq": self.seq,
            "file": str(self.path),
            "bytes": self.size,
            "ops": [asdict(op) for op in self.ops],
        }
        if self.error:
            out["error"] = self.error
        return out


def _summary(op: Op) -> OpSummary:
    if op.kind == "upsert":
        targets = tuple(m.id for m in op.memories)
    elif op.kind == "delete":
        targets = op.ids
    elif op.kind == "put_records":
        targets = tuple(f"{r.kind.value}:{r.key}" for r in op.records)
    else:
        kind = op.record_kind.value if op.record_kind is not None else "?"
        targets = tuple(f"{kind}:{key}" for key in op.keys)
    return OpSummary(
        kind=op.kind,
        tenant=op.partition.tenant_id,
        agent=op.partition.agent_id,
        targets=targets[:MAX_LISTED],
        count=len(targets),
    )


def _seq_of(path: Path) -> int | None:
    try:
        return int(path.stem.removeprefix(REJECTED_PREFIX))
    except ValueError:
        return None


def set_aside_entries(wal_dir: Path) -> list[SetAsideEntry]:
    """Every set-aside entry in ``wal_dir``, oldest first."""
    found = []
    for path in wal_dir.glob(f"{REJECTED_PREFIX}*.bin"):
        seq = _seq_of(path)
        if seq is None:
            continue
        payload = path.read_bytes()
        try:
            ops = tuple(_summary(op) for op in decode(payload))
        except Exception as exc:  # a damaged file is listed, not fatal to the listing
            found.append(SetAsideEntry(seq, path, payload, (), f"{type(exc).__name__}: {exc}"))
            continue
        found.append(SetAsideEntry(seq, path, payload, ops))
    return sorted(found, key=lambda e: e.seq)


def requeue(wal_dir: Path, seqs: set[int] | None = None) -> dict[int, int]:
    """Append the set-aside entries ``seqs`` (all when None) to the log, in their
    original order, as one new segment; once it is fsynced, remove their files.
    Returns {old seq: new seq}. Raises ValueError for an unknown seq or a payload that
    does not decode (nothing is written then)."""
    entries = set_aside_entries(wal_dir)
    if seqs is not None:
        missing = seqs - {e.seq for e in entries}
        if missing:
            raise ValueError(f"no set-aside entry {', '.join(map(str, sorted(missing)))}")
        entries = [e for e in entries if e.seq in seqs]
    damaged = [e.seq for e in entries if e.error]
    if damaged:
        raise ValueError(f"set-aside entries {damaged} do not decode; nothing requeued")
    if not entries:
        return {}
    new = WriteAheadLog(wal_dir).append_offline([e.payload for e in entries])
    for e in entries:
        e.path.unlink()
    # Best effort: were the removals lost in a crash, a later requeue would append the
    # same writes again, which replays idempotently (upserts by id, puts by key).
    with contextlib.suppress(OSError):
        fsync_dir(wal_dir)
    return {e.seq: seq for e, seq in zip(entries, new, strict=True)}
