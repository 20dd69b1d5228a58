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
import json
import os
import shutil
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from memoryd.domain.errors import InvalidArgument, PermissionDenied
from memoryd.domain.lifecycle import (
    EraseReceipt,
    EraseRequest,
    ErasureCheck,
    Residue,
    VerifyErasureRequest,
)
from memoryd.domain.models import Partition, SecurityLevel
from memoryd.service.common import scanning
from memoryd.service.keyed.keys import InvalidKey, file_segment, normalise_prefix, quoted_segment
from memoryd.service.keyed.tree import partition_dir
from memoryd.service.lifecycle import bulk, subject
from memoryd.service.lifecycle.bulk import EVERYTHING, LifecycleDeps
from memoryd.service.lifecycle.compaction import archive_folder
from memoryd.service.lifecycle.view_text import RENDERED_DIR, VIEWS
from memoryd.storage.base import Store, shred
from memoryd.storage.history_journal import HISTORY_DIR, folder_name
from memoryd.storage.history_stores import history_of

#: Places a shred reports even when the store has none of them (the receipt lists
#: every place checked).
SHREDDED = ("log.segments", "store.memories.old_versions", "store.records.old_versions")
#: The memory versions kept for as-of reads (storage/history.py).
HISTORY_PLACE = "history.memory_versions"
#: The agent's as-of history file (<data_dir>/as_of/...), rewritten without them.
HISTORY_FILE_PLACE = "files.memory_history"
#: Bytes read at a time by VerifyErasure (a needle may straddle two reads).
_CHUNK = 1 << 20
#: Most strings one VerifyErasure looks for.
MAX_NEEDLES = 100
#: Shortest subject: it is matched as a substring of every memory and record.
MIN_SUBJECT = 3


async def _erase_history(
    store: Store,
    partition: Partition,
    request: EraseRequest,
    ids: list[str],
    dry_run: bool,
    prefix: str = "",
) -> dict[str, int]:
    """Every as-of version of what is erased: the whole agent's, or those of the
    erased ids and of every memory one of whose versions held the subject (a
    superseded version may hold it when the current one no longer does: such a
    memory stays, its history starting again from its current version), of every
    profile, working memory or session record one of whose versions held it, and of
    every mirror memory of a key under ``prefix`` (a tombstoned key's too). Counted per
    place: the versions, and the journal file rewritten without them (or removed)."""
    history = history_of(store)
    if history is None:
        return {HISTORY_PLACE: 0}
    if request.whole_agent:
        removed = await history.erase_partition(partition, dry_run=dry_run)
    else:
        held, records = history.holding(partition, request.subject) if request.subject else ([], [])
        # A key's mirror memories, the deleted ones (a tombstone's) included.
        held += history.keyed_under(partition, prefix) if prefix else []
        removed = await history.erase(partition, [*ids, *held], records, dry_run=dry_run)
        kept = sorted(set(held) - set(ids))
        if kept and not dry_run:
            history.record(partition, await store.get(partition, kept, with_vectors=True))
            await history.synced()
    places = {HISTORY_PLACE: removed}
    if history.journal is not None:
        places[HISTORY_FILE_PLACE] = int(removed > 0)
    return places


def digest(ids: Iterable[str], places: dict[str, int]) -> str:
    """sha256 over the sorted ids, then the sorted ``place=count`` lines."""
    lines = [*sorted(ids), *sorted(f"{p}={n}" for p, n in places.items())]
    return hashlib.sha256("\n".join(lines).encode()).hexdigest()


@dataclass(frozen=True, slots=True)
class Files:
    """Which of an agent's files an erasure removes (Eraser._files)."""

    #: The agent's whole memory_root directory and key-history archives.
    whole: bool = False
    #: The whole memory_root directory (a key was erased), else its views only.
    mirror: bool = False
    #: Key-history archives holding this text ("": none).
    history_holding: str = ""
    #: The archived history of the keys under this directory ("": none).
    history_keys: str = ""


@dataclass(slots=True)
class Eraser:
    deps: LifecycleDeps
    #: The memory_root (key mirror, memory.md views); None when it is off.
    memory_root: Path | None
    #: Everything VerifyErasure scans.
    data_dir: Path | None
    #: The one tenant of a sidecar daemon (None: several tenants may share the files).
    sole_tenant: str | None = None

    async def erase(
        self, partitions: Sequence[Partition], request: EraseRequest, clearance: SecurityLevel
    ) -> EraseReceipt:
        """Erase what ``request`` selects of each of ``partitions`` (one agent's, or
        every agent of the tenant for ``all_agents``) and shred once: memories above
        ``clearance`` are not the caller's to name (they look missing), and erasing a
        whole agent, a subject or keys, which removes and counts everything that
        matches, needs the highest clearance."""
        prefix = self._checked(request, clearance)
        ids: list[str] = []
        places: dict[str, int] = {}
        for partition in partitions:
            erased, counts = await self._erase_locked(partition, request, prefix, clearance)
            ids.extend(erased)
            for place, n in counts.items():
                places[place] = places.get(place, 0) + n
        removed = any(places.values())
        places.update(dict.fromkeys(SHREDDED, 0))
        if removed and not request.dry_run:
            shredded = {**await shred(self.deps.store), **await shred(self.deps.records)}
            # The log and the tables hold every tenant's writes: what a shred dropped
            # counts the others' writes too, so only a daemon of one tenant says it.
            if self.sole_tenant is not None:
                places.update(shredded)
        return EraseReceipt(
            places=dict(sorted(places.items())),
            ids=tuple(sorted(ids)),
            digest=digest(ids, places),
            dry_run=request.dry_run,
        )

    def _checked(self, request: EraseRequest, clearance: SecurityLevel) -> str:
        """The request's key prefix normalised ("" without one), or why it is refused."""
        chosen = [request.whole_agent, bool(request.ids), bool(request.subject)]
        if sum([*chosen, bool(request.key_prefix)]) != 1:
            raise InvalidArgument.field(
                "ids",
                "name memory ids, a subject, a key prefix or set whole_agent (exactly one)",
            )
        if request.all_agents and not request.subject:
            raise InvalidArgument.field("all_agents", "erases a subject only: name one")
        if not request.ids and clearance < max(SecurityLevel):
            raise PermissionDenied(
                "erasing a whole agent, a subject or keys needs the highest clearance: it "
                "removes, and counts, memories the caller may not read"
            )
        limit = self.deps.limits.max_batch_size
        if len(request.ids) > limit:
            raise InvalidArgument.field("ids", f"has {len(request.ids)} ids; the limit is {limit}")
        if any(not i for i in request.ids):
            raise InvalidArgument.field("ids", "must not contain empty ids")
        if request.subject and len(request.subject) < MIN_SUBJECT:
            raise InvalidArgument.field(
                "subject", f"must be at least {MIN_SUBJECT} characters (it matches substrings)"
            )
        if not request.key_prefix:
            return ""
        try:
            return normalise_prefix(request.key_prefix)
        except InvalidKey as exc:
            raise InvalidArgument.field("key_prefix", str(exc)) from None

    async def _erase_locked(
        self, partition: Partition, request: EraseRequest, prefix: str, clearance: SecurityLevel
    ) -> tuple[list[str], dict[str, int]]:
        keyed = self.deps.keyed
        if keyed is None:
            return await self._erase(partition, request, prefix, clearance)
        # Under the key lock; on release the key mirror is repaired from the records.
        async with keyed.exclusive(partition):
            return await self._erase(partition, request, prefix, clearance)

    async def _erase(
        self, partition: Partition, request: EraseRequest, prefix: str, clearance: SecurityLevel
    ) -> tuple[list[str], dict[str, int]]:
        """The memory ids erased from ``partition`` and the count per place."""
        deps, dry_run = self.deps, request.dry_run
        records: dict[str, int] = {}
        files = Files()
        if request.whole_agent:
            ids = await self._every_id(partition)
            records = await self._records(partition, dry_run=dry_run)
            files = Files(whole=True)
        elif request.subject or prefix:
            if prefix:
                match = await subject.keys_under(deps, partition, prefix)
            else:
                match = await subject.find(deps, partition, request.subject)
            ids = match.ids
            records = await self._matched_records(partition, match, dry_run=dry_run)
            files = Files(
                mirror=bool(match.keys), history_holding=request.subject, history_keys=prefix
            )
        else:
            ids = await self._unkeyed(partition, request.ids, clearance)
        places = {"store.memories": len(ids), **records}
        # Counted before, removed after the store's delete: the history records what a
        # delete removes (its state before it), which must go too.
        places.update(await _erase_history(deps.store, partition, request, ids, True, prefix))
        if not dry_run:
            places["store.memories"] = await bulk.delete(deps, partition, ids)
            places.update(await _erase_history(deps.store, partition, request, ids, False, prefix))
        places.update(await asyncio.to_thread(self._files, partition, files, dry_run))
        return ids, places

    async def _every_id(self, partition: Partition) -> list[str]:
        ids: list[str] = []
        async for page in scanning.scan(self.deps.store, partition, EVERYTHING):
            ids.extend(m.id for m in page)
        return ids

    async def _unkeyed(
        self, partition: Partition, wanted: tuple[str, ...], clearance: SecurityLevel
    ) -> list[str]:
        """The ids the partition holds at most at ``clearance`` (the others behave as
        if they did not exist, as for ForgetMemories); a keyed memory's is refused (its
        key's records hold its content too: a subject or a whole-agent erasure removes
        them)."""
        stored = await self.deps.store.get(partition, list(dict.fromkeys(wanted)))
        found = [m for m in stored if m.security_level <= clearance]
        keyed = sorted(m.id for m in found if m.key)
        if keyed:
            raise InvalidArgument.field(
                "ids",
                f"{keyed} are keyed memories: their key history holds them too; erase "
                "their key by subject, delete it (SetMemory with null) or erase the agent",
            )
        return [m.id for m in found]

    async def _records(self, partition: Partition, *, dry_run: bool) -> dict[str, int]:
        gone = await bulk.delete_partition_records(self.deps, partition, dry_run=dry_run)
        return {f"records.{kind.value}": n for kind, n in gone.items()}

    async def _matched_records(
        self, partition: Partition, match: subject.SubjectMatch, *, dry_run: bool
    ) -> dict[str, int]:
        counts: dict[str, int] = {}
        for kind in bulk.DATA_KINDS:
            keys = sorted(match.records.get(kind, ()))
            gone = len(keys)
            if not dry_run:
                gone = await bulk.delete_records(self.deps, partition, kind, keys)
            counts[f"records.{kind.value}"] = gone
        return counts

    def _files(self, partition: Partition, files: Files, dry_run: bool) -> dict[str, int]:
        """The agent's files. An agent erasure: its whole memory_root directory and
        key-history archives. Otherwise its memory.md views (rendered again from the
        store at the next refresh), the whole directory when a key was erased (the
        key mirror's files and log are rebuilt from the records when the key lock is
        released), and the key-history archives holding the subject."""
        history = archive_folder(self.deps.history_dir, partition)
        folder = None if self.memory_root is None else partition_dir(self.memory_root, partition)
        if files.whole:
            return {
                "files.key_history": _remove([history], dry_run=dry_run),
                "files.memory_root": _remove([] if folder is None else [folder], dry_run=dry_run),
            }
        mirror: list[Path] = []
        if folder is not None:
            views = [folder / RENDERED_DIR, *(folder / v.name for v in VIEWS)]
            mirror = [folder] if files.mirror else views
        out = {"files.memory_root": _remove(mirror, dry_run=dry_run)}
        if files.history_holding:
            needle = files.history_holding.casefold().encode()
            holding = [p for p in _files_under([history]) if needle in p.read_bytes().lower()]
            out["files.key_history"] = _remove(holding, dry_run=dry_run)
        if files.history_keys:
            archives = sorted(_files_under([history]))
            out["files.key_history"] = sum(
                _drop_keys(p, files.history_keys, dry_run=dry_run) for p in archives
            )
        return out

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
        roots, skipped = scan_roots(
            data, self.memory_root, self.deps.history_dir, tenant_id, self.sole_tenant
        )
        checks = [await asyncio.to_thread(scan_tree, data, r, needles) for r in roots]
        return ErasureCheck(
            files_scanned=sum(c.files_scanned for c in checks),
            bytes_scanned=sum(c.bytes_scanned for c in checks),
            residue=tuple(r for c in checks for r in c.residue),
            skipped=skipped,
        )


def scan_roots(
    data: Path, memory_root: Path | None, history_dir: Path, tenant_id: str, sole_tenant: str | None
) -> tuple[list[Path], tuple[str, ...]]:
    """(folders VerifyErasure scans, top-level places of ``data`` it skips): all of
    ``data`` (and a memory_root outside it) for the sole tenant of a sidecar daemon;
    otherwise the tenant's own folders only, the shared files skipped."""
    if sole_tenant == tenant_id:
        if memory_root is None or memory_root.resolve().is_relative_to(data.resolve()):
            return [data], ()
        return [data, memory_root], ()
    own = [
        history_dir / quoted_segment(tenant_id, leaf=False),
        data / HISTORY_DIR / folder_name(tenant_id),
    ]
    if memory_root is not None:
        own.append(memory_root / file_segment(tenant_id, leaf=False))
    mine = [p.resolve() for p in own]
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


def _drop_keys(archive: Path, prefix: str, *, dry_run: bool) -> int:
    """Rewrite a key-history archive (JSON lines, service/lifecycle/compaction.py)
    without the lines of keys under ``prefix`` (the file goes when none is left);
    returns the lines dropped. The new file replaces the old one by a rename."""
    lines = archive.read_text(encoding="utf-8").splitlines(keepends=True)
    kept = [line for line in lines if not str(json.loads(line).get("key", "")).startswith(prefix)]
    dropped = len(lines) - len(kept)
    if dropped and not dry_run:
        if not kept:
            archive.unlink(missing_ok=True)
        else:
            fresh = archive.with_name(archive.name + ".erasing")
            fresh.write_text("".join(kept), encoding="utf-8")
            os.replace(fresh, archive)
    return dropped


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
