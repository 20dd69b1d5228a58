"""Erase and VerifyErasure (docs/erasure.md): every copy of an agent's data, or of
some of its memories, removed from every place the daemon keeps one, with a receipt;
and a byte scan of the data directory for what should be gone.

Erase deletes through the ordinary store path (so the hot cache, the default-read
index and the overlays see the deletes), removes the agent's files (the memory_root's
key mirror and views, the key-history archives), then shreds: the write-ahead log
drops every segment it has applied (the change feed's retained ones included), and
LanceDB removes every old table version and rebuilds its indexes.
"""

from __future__ import annotations

import asyncio
import hashlib
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

from memoryd.domain.errors import InvalidArgument
from memoryd.domain.lifecycle import (
    EraseReceipt,
    EraseRequest,
    ErasureCheck,
    Residue,
    VerifyErasureRequest,
)
from memoryd.domain.models import Partition
from memoryd.service.common import scanning
from memoryd.service.keyed.keys import file_segment, quoted_segment
from memoryd.service.keyed.tree import partition_dir
from memoryd.service.lifecycle import bulk
from memoryd.service.lifecycle.bulk import EVERYTHING, LifecycleDeps
from memoryd.service.lifecycle.compaction import archive_folder
from memoryd.service.lifecycle.view_text import RENDERED_DIR, VIEWS
from memoryd.storage.base import shred

#: Places a shred reports even when the store has none of them (the receipt lists
#: every place checked).
SHREDDED = ("log.segments", "store.memories.old_versions", "store.records.old_versions")
#: Bytes read at a time by VerifyErasure (a needle may straddle two reads).
_CHUNK = 1 << 20
#: Most strings one VerifyErasure looks for.
MAX_NEEDLES = 100


def digest(ids: Iterable[str], places: dict[str, int]) -> str:
    """sha256 over the sorted ids, then the sorted ``place=count`` lines."""
    lines = [*sorted(ids), *sorted(f"{p}={n}" for p, n in places.items())]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


@dataclass(slots=True)
class Eraser:
    deps: LifecycleDeps
    #: The memory_root (key mirror, memory.md views); None when it is off.
    memory_root: Path | None
    #: Everything VerifyErasure scans.
    data_dir: Path | None
    #: The one tenant of a sidecar daemon (None: several tenants may share the files).
    sole_tenant: str | None = None

    async def erase(self, partition: Partition, request: EraseRequest) -> EraseReceipt:
        if request.whole_agent == bool(request.ids):
            raise InvalidArgument.field(
                "ids", "name memory ids or set whole_agent (exactly one of the two)"
            )
        if request.ids:
            await self._check_ids(request.ids)
        keyed = self.deps.keyed
        if keyed is None:
            return await self._erase(partition, request)
        async with keyed.exclusive(partition):
            return await self._erase(partition, request)

    async def _check_ids(self, ids: tuple[str, ...]) -> None:
        limit = self.deps.limits.max_batch_size
        if len(ids) > limit:
            raise InvalidArgument.field("ids", f"has {len(ids)} ids; the limit is {limit}")
        if any(not i for i in ids):
            raise InvalidArgument.field("ids", "must not contain empty ids")

    async def _erase(self, partition: Partition, request: EraseRequest) -> EraseReceipt:
        deps = self.deps
        if request.whole_agent:
            ids: list[str] = []
            async for page in scanning.scan(deps.store, partition, EVERYTHING):
                ids.extend(m.id for m in page)
        else:
            found = await deps.store.get(partition, list(dict.fromkeys(request.ids)))
            keyed = sorted(m.id for m in found if m.key)
            if keyed:
                raise InvalidArgument.field(
                    "ids",
                    f"{keyed} are keyed memories: their key history holds them too; "
                    "delete the key (SetMemory with null) or erase the whole agent",
                )
            ids = [m.id for m in found]
        places = {"store.memories": len(ids)}
        if not request.dry_run:
            places["store.memories"] = await bulk.delete(deps, partition, ids)
        if request.whole_agent:
            places.update(await self._records(partition, dry_run=request.dry_run))
        places.update(await asyncio.to_thread(self._files, partition, request))
        places.update(dict.fromkeys(SHREDDED, 0))
        if not request.dry_run:
            places.update(await shred(deps.store))
            places.update(await shred(deps.records))
        return EraseReceipt(
            places=dict(sorted(places.items())),
            ids=tuple(sorted(ids)),
            digest=digest(ids, places),
            dry_run=request.dry_run,
        )

    async def _records(self, partition: Partition, *, dry_run: bool) -> dict[str, int]:
        gone = await bulk.delete_partition_records(self.deps, partition, dry_run=dry_run)
        return {f"records.{kind.value}": n for kind, n in gone.items()}

    def _files(self, partition: Partition, request: EraseRequest) -> dict[str, int]:
        """The agent's files: its whole memory_root directory and key-history archives
        (an agent erasure), or its memory.md views (re-rendered from the store at the
        next refresh, without the erased memories)."""
        if request.whole_agent:
            folders = [archive_folder(self.deps.history_dir, partition)]
            mirror = (
                [] if self.memory_root is None else [partition_dir(self.memory_root, partition)]
            )
            return {
                "files.key_history": _remove(folders, dry_run=request.dry_run),
                "files.memory_root": _remove(mirror, dry_run=request.dry_run),
            }
        views: list[Path] = []
        if self.memory_root is not None:
            folder = partition_dir(self.memory_root, partition)
            views = [folder / RENDERED_DIR, *(folder / v.name for v in VIEWS)]
        return {"files.memory_views": _remove(views, dry_run=request.dry_run)}

    async def verify(self, tenant_id: str, request: VerifyErasureRequest) -> ErasureCheck:
        """Scan the data directory (and the memory_root) for the needles. Where other
        tenants may share the files (the log, the tables, the audit log), only the
        caller's tenant's own folders are scanned and the rest is listed as skipped:
        a scan of shared files would tell one tenant what another stores."""
        needles = [n.encode() for n in request.needles]
        if not needles or any(not n for n in needles):
            raise InvalidArgument.field("needles", "name at least one non-empty string")
        if len(needles) > MAX_NEEDLES:
            raise InvalidArgument.field("needles", f"at most {MAX_NEEDLES} strings")
        data = self.data_dir
        if data is None:
            return ErasureCheck(0, 0, ())
        roots, skipped = self._roots(tenant_id, data)
        checks = [await asyncio.to_thread(scan_tree, data, r, needles) for r in roots]
        return ErasureCheck(
            files_scanned=sum(c.files_scanned for c in checks),
            bytes_scanned=sum(c.bytes_scanned for c in checks),
            residue=tuple(r for c in checks for r in c.residue),
            skipped=skipped,
        )

    def _roots(self, tenant_id: str, data: Path) -> tuple[list[Path], tuple[str, ...]]:
        """(folders to scan, top-level places skipped)."""
        mirror = self.memory_root
        if self.sole_tenant == tenant_id:
            inside = mirror is None or mirror.resolve().is_relative_to(data.resolve())
            return ([data] if inside or mirror is None else [data, mirror]), ()
        own = [self.deps.history_dir / quoted_segment(tenant_id, leaf=False)]
        if mirror is not None:
            own.append(mirror / file_segment(tenant_id, leaf=False))
        mine = {p.resolve() for p in own}
        skipped = sorted(
            p.name
            for p in (data.iterdir() if data.is_dir() else ())
            if not any(m.is_relative_to(p.resolve()) for m in mine)
        )
        return own, tuple(skipped)


def _files_under(paths: Iterable[Path]) -> Iterator[Path]:
    for path in paths:
        if path.is_file():
            yield path
        elif path.is_dir():
            yield from (p for p in path.rglob("*") if p.is_file())


def _remove(paths: list[Path], *, dry_run: bool) -> int:
    """Delete ``paths`` (files or whole directories); returns the files they held."""
    count = sum(1 for _ in _files_under(paths))
    if not dry_run:
        for path in paths:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                path.unlink(missing_ok=True)
    return count


def scan_tree(base: Path, root: Path, needles: list[bytes]) -> ErasureCheck:
    """Every file under ``root`` read as bytes and searched for each needle (each
    residue's path relative to ``base`` where it is inside it)."""
    files = scanned = 0
    residue: list[Residue] = []
    overlap = max(len(n) for n in needles) - 1
    for path in sorted(_files_under([root])):
        counts = [0] * len(needles)
        tail = b""
        try:
            with open(path, "rb") as f:
                while chunk := f.read(_CHUNK):
                    window = tail + chunk
                    for i, needle in enumerate(needles):
                        # Only matches that end in the new chunk: none counted twice.
                        counts[i] += window.count(needle) - tail.count(needle)
                    tail = window[-overlap:] if overlap else b""
                    scanned += len(chunk)
        except OSError:
            continue  # gone while scanning (a segment dropped, a table compacted)
        files += 1
        rel = str(path.relative_to(base)) if path.is_relative_to(base) else str(path)
        residue.extend(Residue(rel, i, n) for i, n in enumerate(counts) if n)
    return ErasureCheck(files, scanned, tuple(residue))
