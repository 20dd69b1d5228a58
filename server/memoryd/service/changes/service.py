"""Watch: the changes of an agent, or of a tenant, after a cursor (docs/watch.md).

The loop reads a bounded batch of visible log entries (in the feed's thread), yields the
changes the caller may see in messages of at most MESSAGE_CHANGES, and reads the next
batch only once they were taken: the transport's send waits for its flow control, so a slow watcher holds
one batch. With nothing left to read it says so once (``caught_up``, with a cursor)
and, following, waits for the write path's signal; else the stream ends there.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

from memoryd.domain.changes import Change, WatchItem, WatchQuery, WatchStart
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.principal import CallScope
from memoryd.durability.changes import ChangeLog, LoggedEntry
from memoryd.durability.ops import partition_marker
from memoryd.service.changes.cursor import FIELD, INVALID, Binding, CursorCodec, Position
from memoryd.service.changes.events import changes_of, visible_to

#: Changes one message carries at most: a message per change would cost gRPC's
#: per-message overhead for each; a bounded batch keeps what a slow watcher holds small.
MESSAGE_CHANGES = 256


class ChangeFeedService:
    """Streams the changes of the write-ahead log ``changes`` reads."""

    def __init__(self, changes: ChangeLog, cursors: CursorCodec) -> None:
        self._log = changes
        self._cursors = cursors

    async def watch(self, scope: CallScope, query: WatchQuery) -> AsyncIterator[WatchItem]:
        """Every change after the query's cursor (or from its start) the caller may
        read, in log order, each with the cursor that resumes after it."""
        binding = Binding(
            self._log.log_id,
            scope.partition.tenant_id,
            "" if query.tenant_wide else scope.partition.agent_id,
        )
        position = self._start(query, binding)
        after = position.seq if position.delivered is None else position.seq - 1
        # Entries of other partitions are passed over undecoded: a watcher of one agent
        # pays little for the writes of every other one.
        marker = partition_marker(
            scope.partition.tenant_id, None if query.tenant_wide else scope.partition.agent_id
        )
        reader = self._log.reader(after)
        try:
            caught_up = False
            while True:
                visible = self._log.visible_seq()
                entries = await self._log.read(reader, visible, marker)
                for item in self._messages(entries, scope, query, position, binding):
                    yield item
                if entries:
                    continue
                if not caught_up:
                    caught_up = True
                    cursor = self._cursors.encode(Position(reader.after), binding)
                    yield WatchItem(cursor, caught_up=True)
                    if not query.follow:
                        return
                await self._log.wait(visible)
        finally:
            reader.close()

    def sequence_of(self, scope: CallScope, cursor: str) -> int:
        """The log sequence a cursor issued to the caller (a watch of its agent, or
        of its tenant) has read up to; INVALID_ARGUMENT naming ``as_of`` otherwise.
        The number stays in the daemon: as-of reads resolve it (docs/as-of.md)."""
        tenant, agent = scope.partition.tenant_id, scope.partition.agent_id
        for watched in (agent, ""):
            try:
                position = self._cursors.decode(cursor, Binding(self._log.log_id, tenant, watched))
            except InvalidArgument:
                continue
            return position.seq
        raise InvalidArgument.field("as_of", f"cursor: {INVALID}")

    def _start(self, query: WatchQuery, binding: Binding) -> Position:
        last = self._log.last_seq()
        if not query.cursor:
            if query.start is WatchStart.OLDEST:
                return Position(self._log.retained_from() - 1)
            return Position(self._log.visible_seq())
        position = self._cursors.decode(query.cursor, binding)
        if position.seq > last:  # a log restored from an older copy: not this history
            raise InvalidArgument.field(FIELD, INVALID)
        return position

    def _messages(
        self,
        entries: list[LoggedEntry],
        scope: CallScope,
        query: WatchQuery,
        resume: Position,
        binding: Binding,
    ) -> Iterator[WatchItem]:
        """The changes of ``entries`` the caller may see, MESSAGE_CHANGES a message, each
        message with the position after its last change."""
        batch: list[Change] = []
        last = resume
        for entry in entries:
            found = changes_of(entry)
            skip = resume.delivered if entry.seq == resume.seq and resume.delivered else 0
            for index, item in enumerate(found):
                if index < skip or not visible_to(scope, query.tenant_wide, item):
                    continue
                batch.append(item.change)
                last = Position(entry.seq, None if index == len(found) - 1 else index + 1)
                if len(batch) == MESSAGE_CHANGES:
                    yield WatchItem(self._cursors.encode(last, binding), tuple(batch))
                    batch = []
        if batch:
            yield WatchItem(self._cursors.encode(last, binding), tuple(batch))
