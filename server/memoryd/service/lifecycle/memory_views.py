"""``memory.md`` and ``learnings.md``: an agent's memories as files a person edits.

In each partition's memory_root directory (``<memory_root>/<tenant>/<agent>/``, next
to the keyed mirror's files) the daemon keeps two views of the agent's live memories
(view_text.py): ``memory.md`` (preferences, facts, patterns) and ``learnings.md``
(skills). Memories above ``keys.mirror_clearance`` are never written: whoever can
read the directory reads what is in it.

They are two-way. A refresh of a partition first reads each file back: when its
text differs from what was last rendered (kept in ``.views/<name>``), the person's
edit is applied, line by line against that last render, so a line nobody touched
never reverts a write made since:

- a marked line whose text changed updates that memory's content (and type, when it
  moved to another section), with provenance kind ``file``;
- a bullet without a marker becomes a new memory of its section's type
  (provenance ``file``);
- a marked line that was deleted archives its memory (Restore undoes it).

Only then is the file rendered again from the store, and it is replaced only if
nobody changed it since it was read (else the refresh reads it again), so an edit
is never overwritten unread. A partition is refreshed shortly after a write to it
(the door calls :meth:`MemoryViews.changed`; writes in a row share one refresh, and
under a steady stream of writes the partitions are refreshed one at a time, each
followed by a pause in proportion to its cost, so that they take a bounded share
of the time: a refresh reads the whole partition);
a file edited while nothing is written is read back at the partition's next write,
its next scheduled maintenance run, or :meth:`MemoryViews.refresh`. An edited line
of a memory archived or forgotten since the render is not applied (and logged). A file a person created before any render has its
bullets read in as new memories rather than being replaced.
"""

from __future__ import annotations

import asyncio
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.domain.lifecycle import MemorySelector
from memoryd.domain.models import (
    Clock,
    Memory,
    MemoryFilter,
    Partition,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
    utcnow,
)
from memoryd.domain.principal import CallScope, Principal, Role
from memoryd.domain.requests import ListQuery, MemoryDraft, MemoryPatch
from memoryd.service.keyed.tree import atomic_write, partition_dir
from memoryd.service.lifecycle.service import LifecycleService
from memoryd.service.lifecycle.view_text import (
    RENDERED_DIR,
    VIEWS,
    Line,
    View,
    parse,
    render,
    short_id,
)
from memoryd.service.memories.service import DEFAULT_SECURITY_LEVEL, MemoryService

log = structlog.get_logger(__name__)

#: Seconds a refresh waits after a write, so writes in a row share it.
DEBOUNCE_S = 0.2
#: After refreshing one partition the views wait this many times as long as it took
#: before the next. A refresh lists the agent's whole partition (its cost grows with
#: it): refreshed back to back, the views took about 4 of a SetMemory's 12 ms of
#: daemon CPU with 8 writers, and a round of 8 agents' refreshes at once held up
#: writes for a second (issue 31). Paced one partition at a time, they take at most
#: about a fifth of the time, in slices, however large the partitions grow.
PACE = 4.0
#: Reads of a file a person keeps changing before a refresh gives up until next time.
_MAX_ROUNDS = 5
_PAGE = 500


@dataclasses.dataclass(frozen=True, slots=True)
class _Edits:
    """What a person's edit of one view asks for."""

    updates: list[tuple[Memory, Line]]
    new: list[Line]
    archived: list[str]


@dataclasses.dataclass(eq=False)
class MemoryViews:
    """The two-way ``memory.md`` / ``learnings.md`` of every partition under ``root``."""

    root: Path
    memories: MemoryService
    lifecycle: LifecycleService
    _: dataclasses.KW_ONLY
    clearance: SecurityLevel = SecurityLevel.INTERNAL
    clock: Clock = utcnow
    debounce_s: float = DEBOUNCE_S
    #: Measures how long a round of refreshes took (for the pacing only).
    monotonic: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        #: Written since their last refresh, oldest first (a dict keeps the order:
        #: a partition written again goes to the back, so none waits forever).
        self._dirty: dict[Partition, None] = {}
        self._locks: dict[Partition, asyncio.Lock] = {}
        self._timer: asyncio.Task[None] | None = None
        #: One flush at a time: a flush that found the set empty must still wait for the
        #: partitions another flush (the debounce timer's) popped and is refreshing.
        self._flushing = asyncio.Lock()
        #: Edits read back so far (tests and logs).
        self.edits_read = 0

    async def close(self) -> None:
        """Stop the pending refresh (its partitions are refreshed at their next write)."""
        await cancel_and_wait(self._timer)

    def changed(self, partition: Partition) -> None:
        """A write to ``partition`` committed: refresh its views soon."""
        if not partition.agent_id:  # a tenant-wide call: each agent at its next write
            return
        self._dirty.setdefault(partition)
        if self._timer is None or self._timer.done():
            self._timer = asyncio.create_task(self._paced(), name="memory-views")

    async def flush(self) -> None:
        """Refresh every partition written since the last refresh, now; returns when
        each is refreshed, including those a flush already under way took."""
        async with self._flushing:
            while self._dirty:
                await self._refresh_logged(self._take())

    def _take(self) -> Partition:
        partition = next(iter(self._dirty))
        del self._dirty[partition]
        return partition

    async def _paced(self) -> None:
        """After ``debounce_s``, the written partitions one at a time, oldest first,
        each followed by a pause of PACE times its refresh, while writes come."""
        await asyncio.sleep(self.debounce_s)
        while self._dirty:
            async with self._flushing:
                if not self._dirty:  # a flush took them meanwhile
                    return
                started = self.monotonic()
                await self._refresh_logged(self._take())
                took = self.monotonic() - started
            await asyncio.sleep(PACE * took)

    async def _refresh_logged(self, partition: Partition) -> None:
        try:
            await self.refresh(partition)
        except Exception:  # a file or store error: the next write tries again
            log.exception(
                "memory views refresh failed",
                tenant=partition.tenant_id,
                agent=partition.agent_id,
            )

    async def refresh(self, partition: Partition) -> None:
        """Read each view's edits back into the store, then render it again."""
        lock = self._locks.setdefault(partition, asyncio.Lock())
        async with lock:
            directory = partition_dir(self.root, partition)
            scope = self._scope(partition)
            for view in VIEWS:
                await self._refresh_view(scope, directory, view)

    # ------------------------------------------------------------------ one view

    async def _refresh_view(self, scope: CallScope, directory: Path, view: View) -> None:
        path = directory / view.name
        rendered_path = directory / RENDERED_DIR / view.name
        for _ in range(_MAX_ROUNDS):
            seen = await asyncio.to_thread(_read, path)
            last = await asyncio.to_thread(_read, rendered_path)
            live = await self._live(scope, view)
            if seen is not None and seen != last:  # never rendered: its bullets are new
                before = parse(view, last) if last is not None else []
                await self._read_back(scope, view, path, live, before, parse(view, seen))
                live = await self._live(scope, view)
            text = render(view, live.values())
            if await asyncio.to_thread(_replace_if_unchanged, path, seen, text):
                # The file first: a crash before this line only re-reads our own render.
                await asyncio.to_thread(atomic_write, rendered_path, text)
                return
        log.warning("memory views: file keeps changing, refresh left for later", path=str(path))

    async def _read_back(
        self,
        scope: CallScope,
        view: View,
        path: Path,
        live: dict[str, Memory],
        last: list[Line],
        seen: list[Line],
    ) -> None:
        edits = _edits(live, last, seen)
        source = Provenance(
            ProvenanceKind.FILE,
            name=view.name,
            retrieved_at=self.clock(),
            locator=str(path.relative_to(self.root)),
        )
        for memory, line in edits.updates:
            values = {"content": line.content, "memory_type": line.memory_type, "source": source}
            patch = MemoryPatch(frozenset(values), values)
            await self.memories.update(scope, memory.id, patch)
        if edits.new:
            # Never above what the file may show (a PUBLIC memory_root gets PUBLIC).
            level = min(DEFAULT_SECURITY_LEVEL, self.clearance)
            drafts = [
                MemoryDraft(
                    content=line.content,
                    memory_type=line.memory_type,
                    source=source,
                    security_level=level,
                )
                for line in edits.new
            ]
            await self.memories.remember_batch(scope, drafts)
        if edits.archived:
            await self.lifecycle.archive(scope, MemorySelector(ids=tuple(edits.archived)))
        self.edits_read += 1
        log.info(
            "memory views: edit read back",
            tenant=scope.partition.tenant_id,
            agent=scope.partition.agent_id,
            file=view.name,
            updated=len(edits.updates),
            added=len(edits.new),
            archived=len(edits.archived),
        )

    async def _live(self, scope: CallScope, view: View) -> dict[str, Memory]:
        """The view's live memories at or below the clearance, by marker id."""
        found: dict[str, Memory] = {}
        flt = MemoryFilter(memory_types=view.types, max_security_level=self.clearance)
        token = ""
        while True:
            page = await self.memories.list_memories(
                scope, ListQuery(filter=flt, page_size=_PAGE, page_token=token)
            )
            found.update((short_id(m.id), m) for m in page.memories)
            token = page.next_page_token
            if not token:
                return found

    def _scope(self, partition: Partition) -> CallScope:
        principal = Principal(
            name="memory-views",
            tenant_id=partition.tenant_id,
            agents=frozenset({partition.agent_id}),
            clearance=self.clearance,
            roles=frozenset({Role.READ, Role.WRITE}),
        )
        return CallScope(principal, partition)


def _edits(live: dict[str, Memory], last: list[Line], seen: list[Line]) -> _Edits:
    """A person's edit as changes: each marked line compared with the same line as
    last rendered (never with the store, which may have moved on since)."""
    before = {line.short_id: line for line in last if line.short_id}
    kept: set[str] = set()
    updates: list[tuple[Memory, Line]] = []
    new: list[Line] = []
    for line in seen:
        if line.short_id is None:
            new.append(line)
            continue
        kept.add(line.short_id)
        previous = before.get(line.short_id)
        memory = live.get(line.short_id)
        if previous is None or previous == line:
            continue  # unknown marker, or untouched
        if memory is None:
            log.warning(
                "memory views: edit of a memory gone since not applied", marker=line.short_id
            )
            continue
        updates.append((memory, line))
    archived = [live[sid].id for sid in before if sid not in kept and sid in live]
    return _Edits(updates, new, archived)


def _read(path: Path) -> str | None:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


def _replace_if_unchanged(path: Path, seen: str | None, text: str) -> bool:
    """Write ``text`` at ``path`` unless it changed since it read ``seen``."""
    if _read(path) != seen:
        return False
    if seen != text:
        path.parent.mkdir(parents=True, exist_ok=True)
        atomic_write(path, text)
    return True
