"""Sessions (short-term memory): the message log of a run, its fixed zone and summary.

A session keeps every message appended to it until it expires: compression builds
the summary view, it never deletes the record. The header (fixed zone, summary,
turns not yet summarised) and the folded turns are stored as described in
memoryd.service.sessions.record. When the turns not yet summarised reach
``compress_threshold_messages`` or ``compress_token_ratio`` of
``context_budget_tokens``, all but the last ``keep_recent_messages`` are folded into
the summary; those settings are the daemon's ``sessions.*`` unless the session set
its own (AppendMessages ``compression``).

Appending to an unknown session, or injecting into one, creates it. A session expires
``ttl`` after its last append or injection and then reads as absent. EndSession
closes it (later appends and injections are FAILED_PRECONDITION; the window and the
messages stay readable). GetSessionMessages pages through every stored message by
seq; DeleteMessages removes messages by seq (rebuilding the summary when it covered
one); ClearSession removes every message and the summary.

The window (fixed zone, summary, recent turns within a token budget) is fitted by
memoryd.service.sessions.window.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import TypeVar

from memoryd.config import LimitsSettings, SessionSettings
from memoryd.domain.agent_state import (
    AppendOutcome,
    AttachmentQuery,
    AttachmentSlice,
    DeleteMessagesOutcome,
    EndSessionOutcome,
    FixedZoneEntry,
    FixedZoneKind,
    LongTermMemoryMode,
    MessageDraft,
    SessionCompression,
    SessionMessage,
    SessionMessagesPage,
    SessionMessagesQuery,
    SessionWindow,
)
from memoryd.domain.errors import FailedPrecondition, NotFound, ResourceExhausted
from memoryd.domain.models import Memory, PageCursor, Partition
from memoryd.domain.principal import CallScope
from memoryd.domain.records import Record, RecordKind
from memoryd.domain.requests import Degradation
from memoryd.service.common.llm import LLM_COMPONENT
from memoryd.service.common.pagination import PageTokenCodec, fingerprint
from memoryd.service.common.quotas import Quotas
from memoryd.service.common.record_writes import RecordService
from memoryd.service.common.tokens import TokenCounter
from memoryd.service.common.validation import Violations
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions import attachments, history
from memoryd.service.sessions.attachments import Offload
from memoryd.service.sessions.checks import MAX_TOKEN_BUDGET, SessionChecks
from memoryd.service.sessions.extract import Extractor
from memoryd.service.sessions.long_term import LongTermMemory, turns
from memoryd.service.sessions.record import CLOSED, OPEN, SessionState
from memoryd.service.sessions.summarize import Summarizer, SummaryResult, message_line
from memoryd.service.sessions.window import WindowOptions, fitted_window

T = TypeVar("T")

DEFAULT_MESSAGES_PAGE = 100
#: The summary after an append, and the turns the append folded into it.
_Folded = tuple[str, list[SessionMessage]]


@dataclass(frozen=True, slots=True)
class Compression:
    """The compression settings in force for one session."""

    threshold: int
    token_ratio: float
    budget: int
    keep: int
    offload: Offload
    merge: bool


@dataclass(eq=False, kw_only=True)
class SessionService(RecordService):
    """Sessions: their messages and attachments, compression, and what they leave in long-term memory."""

    memories: MemoryService
    summarizer: Summarizer
    counter: TokenCounter
    settings: SessionSettings
    limits: LimitsSettings
    page_tokens: PageTokenCodec
    quotas: Quotas | None = None

    def __post_init__(self) -> None:
        self._check = SessionChecks(self.settings)
        self._extractor = Extractor(self.summarizer, self.settings, self.limits)
        self._long_term = LongTermMemory(
            memories=self.memories,
            summarizer=self.summarizer,
            settings=self.settings,
            limits=self.limits,
            clock=self.clock,
        )

    @property
    def token_counter(self) -> TokenCounter:
        return self.counter

    def compression(self, session: SessionState) -> Compression:
        s, o = self.settings, session.compression
        return Compression(
            threshold=o.compress_threshold_messages or s.compress_threshold_messages,
            token_ratio=o.compress_token_ratio or s.compress_token_ratio,
            budget=o.context_budget_tokens or s.context_budget_tokens,
            keep=s.keep_recent_messages
            if o.keep_recent_messages is None
            else o.keep_recent_messages,
            offload=Offload(
                s.offload_bytes if o.offload_bytes is None else o.offload_bytes,
                s.offload_preview_chars,
            ),
            merge=s.merge_adjacent_messages
            if o.merge_adjacent_messages is None
            else o.merge_adjacent_messages,
        )

    # ------------------------------------------------------------------ writes

    async def append(
        self,
        scope: CallScope,
        session_id: str,
        drafts: Sequence[MessageDraft],
        ttl: timedelta | None = None,
        compression: SessionCompression | None = None,
        mode: LongTermMemoryMode | None = None,
    ) -> AppendOutcome:
        """Append ``drafts``; large tool results are offloaded (service/sessions/
        attachments.py) and, under static control, the replies recorded in long-term
        memory (service/sessions/long_term.py)."""
        v = Violations()
        self._check.session_id(v, session_id)
        self._check.ttl(v, ttl)
        self._check.messages(v, drafts, self.limits.max_batch_size, self.clock())
        v.raise_if_any()

        async def change(
            session: SessionState, now: datetime
        ) -> tuple[AppendOutcome, list[list[SessionMessage]], _Folded]:
            self._require_open(session)
            if compression is not None:
                self._set_compression(session, compression)
            if mode is not None:
                session.long_term_memory_mode = mode
            self._admit(scope.partition, session, len(drafts))
            stored = attachments.append_drafts(
                session,
                drafts,
                self.compression(session).offload,
                self.settings.max_message_bytes,
                now,
            )
            if ttl is not None:
                session.ttl_s = ttl.total_seconds()
            exchanges = turns(session.messages, len(drafts))
            folded, degraded = await self._compress_if_due(session)
            await self._store(scope.partition, session, folded, self.clock(), extra=stored)
            offloaded = tuple(attachments.seq_of_attachment(r.key) for r in stored)
            outcome = AppendOutcome(session.message_count, bool(folded), degraded, (), offloaded)
            automatic = session.long_term_memory_mode.automatic
            return outcome, exchanges if automatic else [], (session.summary, folded)

        outcome, exchanges, folded = await self._rewrite(scope, session_id, change, create=True)
        return await self._remember_after(scope, session_id, outcome, exchanges, folded)

    async def _remember_after(
        self,
        scope: CallScope,
        session_id: str,
        outcome: AppendOutcome,
        exchanges: list[list[SessionMessage]],
        folded: _Folded,
    ) -> AppendOutcome:
        """What an append records in long-term memory once written: the facts of the
        turns it folded into the summary, and (static control) its replies."""
        ids: list[str] = []
        notes: list[Degradation] = []
        if folded[1] and self.settings.extract_on_summary:
            ids, notes = await self._extractor.remember_folded(
                self.memories,
                scope,
                session_id,
                folded,
                self.clock(),
                use_llm=not any(d.component == LLM_COMPONENT for d in outcome.degraded),
            )
        if exchanges:
            recorded, more = await self._long_term.record(scope, session_id, exchanges)
            ids, notes = [*ids, *recorded], [*notes, *more]
        if not ids and not notes:
            return outcome
        degraded = tuple(dict.fromkeys((*outcome.degraded, *notes)))
        return replace(outcome, degraded=degraded, recorded_memory_ids=tuple(ids))

    def _admit(self, partition: Partition, session: SessionState, adding: int) -> None:
        """Raise ResourceExhausted when ``adding`` messages would pass a limit: the
        daemon's ``sessions.max_messages`` or the tenant's ``quotas.max_session_messages``."""
        limit = self.settings.max_messages
        if session.message_count + adding > limit:
            raise ResourceExhausted(
                f"session {session.id!r} has {session.message_count} messages; appending "
                f"{adding} would exceed sessions.max_messages ({limit})"
            )
        if self.quotas is not None:
            self.quotas.check_session_messages(partition.tenant_id, session.message_count, adding)

    def _set_compression(self, session: SessionState, overrides: SessionCompression) -> None:
        merged = session.compression.merged(overrides)
        v = Violations()
        self._check.compression(v, overrides, merged)
        v.raise_if_any()
        session.compression = merged

    async def inject(
        self, scope: CallScope, session_id: str, kind: FixedZoneKind | None, content: str
    ) -> list[FixedZoneEntry]:
        """Add to the fixed zone; a trigger or focus replaces the previous one."""
        v = Violations()
        self._check.session_id(v, session_id)
        if kind is None:
            v.add("kind", "must be set (trigger, focus or instruction)")
        self._check.text(v, content, "content", required=True)
        v.raise_if_any()
        assert kind is not None

        async def change(session: SessionState, now: datetime) -> list[FixedZoneEntry]:
            self._require_open(session)
            zone = session.fixed_zone
            if kind is not FixedZoneKind.INSTRUCTION:
                zone = [e for e in zone if e.kind is not kind]
            if len(zone) >= self.settings.max_fixed_zone_entries:
                raise ResourceExhausted(
                    f"session {session_id!r} has {len(zone)} fixed-zone entries, the limit "
                    f"(sessions.max_fixed_zone_entries)"
                )
            session.fixed_zone = [*zone, FixedZoneEntry(kind, content, now)]
            await self._store(scope.partition, session, [], now)
            return list(session.fixed_zone)

        return await self._rewrite(scope, session_id, change, create=True)

    async def end(self, scope: CallScope, session_id: str, *, extract: bool) -> EndSessionOutcome:
        """Summarise what is left, close the session and (``extract``) remember what
        it taught; every message stays stored until the session expires."""
        v = Violations()
        self._check.session_id(v, session_id)
        v.raise_if_any()

        async def change(session: SessionState, now: datetime) -> EndSessionOutcome:
            self._require_open(session)
            degraded: list[Degradation] = []
            folded: list[SessionMessage] = []
            if session.messages:
                result = await self.summarizer.summarize(session.summary, session.messages)
                degraded.extend(result.degraded)
                folded = session.fold(
                    len(session.messages), result.text, result.method, result.degraded
                )
            else:
                degraded.extend(session.summary_degraded)
            extracted = []
            if extract:
                messages = [
                    m async for page in self._stored(scope.partition, session, folded) for m in page
                ]
                drafts, notes = await self._extractor.session_drafts(scope, session, messages, now)
                degraded.extend(notes)
                if drafts:
                    # Replicas: an attempt that loses the header to another writer
                    # remembers these again; deduplication merges the repeats.
                    outcomes = await self.memories.remember_batch(
                        scope, drafts, field_prefix="extracted"
                    )
                    extracted = [o.memory for o in outcomes]
            session.status = CLOSED
            await self._store(scope.partition, session, folded, self.clock(), touch=False)
            return EndSessionOutcome(session.summary, extracted, tuple(dict.fromkeys(degraded)))

        return await self._rewrite(scope, session_id, change)

    async def delete_messages(
        self, scope: CallScope, session_id: str, seqs: Sequence[int]
    ) -> DeleteMessagesOutcome:
        """Delete stored messages by seq (unknown seqs are ignored). When the summary
        covered a deleted message it is rebuilt from the folded messages that remain,
        so what was deleted does not live on in it."""
        v = Violations()
        self._check.session_id(v, session_id)
        if not seqs:
            v.add("seqs", "must not be empty")
        elif len(seqs) > self.limits.max_batch_size:
            v.add("seqs", f"has {len(seqs)} seqs; the limit is {self.limits.max_batch_size}")
        if any(s < 1 for s in seqs):
            v.add("seqs", "must be positive")
        v.raise_if_any()
        wanted = set(seqs)
        #: Folded messages this call deleted, over every attempt: an attempt that lost
        #: the header to another writer finds them gone, yet its header must count them.
        removed: set[int] = set()

        async def change(session: SessionState, now: datetime) -> DeleteMessagesOutcome:
            doomed = [m for m in session.messages if m.seq in wanted]
            tail = [m.seq for m in doomed]
            session.messages = [m for m in session.messages if m.seq not in wanted]
            older = sorted(s for s in wanted if s <= session.summarized_through_seq)
            named = attachments.refs(doomed) + await attachments.folded_refs(
                self.records, scope.partition, session, older
            )
            await attachments.delete_refs(self.records, scope.partition, session, named)
            removed.update(await self._history(scope.partition, session).delete_folded(older))
            gone = sorted(removed.intersection(older))
            session.stored_messages -= len(tail) + len(gone)
            degraded: tuple[Degradation, ...] = ()
            if gone:
                degraded = await self._rebuild_summary(scope.partition, session)
            await self._store(scope.partition, session, [], now, touch=False)
            return DeleteMessagesOutcome(sorted([*tail, *gone]), bool(gone), degraded)

        return await self._rewrite(scope, session_id, change)

    async def clear(self, scope: CallScope, session_id: str, *, fixed_zone: bool = False) -> int:
        """Delete every message and the summary (and, ``fixed_zone``, the fixed zone);
        the session stays open and its seqs keep counting. Returns messages deleted."""
        v = Violations()
        self._check.session_id(v, session_id)
        v.raise_if_any()

        async def change(session: SessionState, now: datetime) -> int:
            deleted = session.stored_messages
            await history.delete_generation(
                self.records, scope.partition, session.id, session.generation
            )
            session.messages = []
            session.stored_messages = 0
            session.summary, session.summarizer, session.summary_degraded = "", "", []
            session.summarized_through_seq = session.message_count
            if fixed_zone:
                session.fixed_zone = []
            await self._store(scope.partition, session, [], now, touch=False)
            return deleted

        return await self._rewrite(scope, session_id, change)

    async def purge_expired(self, partition: Partition, now: datetime | None = None) -> int:
        """Delete the partition's expired sessions with their messages, and message
        records left behind by an earlier session of the same id (for maintenance);
        returns how many sessions went."""
        now = now or self.clock()
        expired = set(await history.expired_sessions(self.records, partition, now))
        generations = await history.message_generations(self.records, partition)
        gone = 0
        for session_id in sorted(expired | set(generations)):
            async with self._writes.locked((partition, session_id)):
                found = await self.records.get_records(partition, RecordKind.SESSION, [session_id])
                live = found and not found[0].expired(now)
                if live:
                    current = SessionState.from_record(found[0]).generation
                    for generation in generations.get(session_id, set()) - {current}:
                        await history.delete_generation(
                            self.records, partition, session_id, generation
                        )
                    continue
                await history.delete_generation(self.records, partition, session_id)
                if found:
                    gone += len(
                        await self.records.delete_records(
                            partition, RecordKind.SESSION, [session_id]
                        )
                    )
        return gone

    # ------------------------------------------------------------------ reads

    async def window(
        self, scope: CallScope, session_id: str, token_budget: int | None = None
    ) -> SessionWindow:
        """Fixed zone, long-term memories (static control), summary, then the most recent
        turns that fit, never over budget (service/sessions/window.py)."""
        v = Violations()
        self._check.session_id(v, session_id)
        if token_budget is not None and not 0 < token_budget <= MAX_TOKEN_BUDGET:
            v.add("token_budget", f"must be between 1 and {MAX_TOKEN_BUDGET}")
        v.raise_if_any()
        session = await self._get(scope.partition, session_id, self.clock())
        c = self.compression(session)
        found: list[Memory] = []
        notes: tuple[Degradation, ...] = ()
        if session.long_term_memory_mode.automatic:
            found, notes = await self._long_term.retrieve(scope, session)
        options = WindowOptions(
            summarizer=self.summarizer.preferred_method,
            merge=c.merge,
            long_term=found,
            long_term_ratio=self.settings.long_term_memory_token_ratio,
        )
        window = fitted_window(session, token_budget or c.budget, self.counter, options)
        if notes:
            window = replace(window, degraded=tuple(dict.fromkeys((*window.degraded, *notes))))
        return window

    async def attachment(self, scope: CallScope, query: AttachmentQuery) -> AttachmentSlice:
        """A slice of an offloaded message's full content."""
        self._check.attachment_query(query)
        session = await self._get(scope.partition, query.session_id, self.clock())
        return await attachments.read(self.records, scope.partition, session, query)

    async def messages(self, scope: CallScope, query: SessionMessagesQuery) -> SessionMessagesPage:
        """Stored messages with from_seq <= seq <= to_seq (0: unbounded), oldest first."""
        self._check.messages_query(query, self.limits.max_page_size)
        page_size = query.page_size or DEFAULT_MESSAGES_PAGE
        session = await self._get(scope.partition, query.session_id, self.clock())
        query_print = fingerprint(
            scope,
            [
                "session_messages",
                query.session_id,
                session.generation,
                query.from_seq,
                query.to_seq,
            ],
        )
        after = max(0, query.from_seq - 1)
        if query.page_token:
            after = max(after, int(self.page_tokens.decode(query.page_token, query_print).id))
        stored = self._history(scope.partition, session)
        page, more = await stored.page(after, query.to_seq, page_size)
        token = ""
        if more:
            last = page[-1]
            token = self.page_tokens.encode(PageCursor(last.created_at, str(last.seq)), query_print)
        return SessionMessagesPage(
            messages=page,
            next_page_token=token,
            message_count=session.message_count,
            summarized_through_seq=session.summarized_through_seq,
        )

    # ------------------------------------------------------------------ helpers

    async def _load(
        self, partition: Partition, session_id: str, now: datetime
    ) -> SessionState | None:
        found = await self.records.get_records(partition, RecordKind.SESSION, [session_id])
        if not found:
            return None
        record = found[0]
        if record.expired(now):
            return None
        return SessionState.from_record(record)

    async def _load_or_new(
        self, partition: Partition, session_id: str, now: datetime
    ) -> SessionState:
        """The live session, else a new one (what an expired one of the same id left
        behind goes first; its header is what the new one's first write replaces)."""
        found = await self.records.get_records(partition, RecordKind.SESSION, [session_id])
        record = found[0] if found else None
        if record is not None and not record.expired(now):
            return SessionState.from_record(record)
        if record is not None:
            old = SessionState.from_record(record).generation
            await history.delete_generation(self.records, partition, session_id, old)
        return SessionState(
            id=session_id, created_at=now, ttl_s=self.settings.ttl_s, read_from=record
        )

    async def _rewrite(
        self,
        scope: CallScope,
        session_id: str,
        change: Callable[[SessionState, datetime], Awaitable[T]],
        *,
        create: bool = False,
    ) -> T:
        """``change`` of the session's header as read now (a new session when
        ``create``, else NOT_FOUND), as one read-modify-write: run again when another
        writer changed the header in between (a store shared by replicas)."""

        async def attempt() -> T:
            now = self.clock()
            load = self._load_or_new if create else self._get
            return await change(await load(scope.partition, session_id, now), now)

        return await self._writes.run((scope.partition, session_id), attempt)

    async def _get(self, partition: Partition, session_id: str, now: datetime) -> SessionState:
        session = await self._load(partition, session_id, now)
        if session is None:
            raise NotFound(f"session {session_id!r} not found")
        return session

    async def _store(
        self,
        partition: Partition,
        session: SessionState,
        folded: Sequence[SessionMessage],
        now: datetime,
        *,
        touch: bool = True,
        extra: Sequence[Record] = (),
    ) -> None:
        """The header, the newly folded messages and ``extra`` (attachments of this
        call's messages), in one store write, over the header read
        (service/common/record_writes.py). On a shared store the folded messages stored
        when the header was read are written first (whoever wins, their content is
        the same); those appended in this call and ``extra``, after the header is won."""
        stored = [session.message_record(m) for m in folded if m.seq <= session.read_count]
        new = [session.message_record(m) for m in folded if m.seq > session.read_count]
        await self._writes.replace(
            partition,
            session.record(now, touch=touch),
            session.read_from,
            before=stored,
            after=[*new, *extra],
        )

    async def _stored(
        self, partition: Partition, session: SessionState, folded: Sequence[SessionMessage]
    ) -> AsyncIterator[list[SessionMessage]]:
        """Every stored message, including ``folded`` ones not written yet."""
        pending = {m.seq for m in folded}
        async for page in self._history(partition, session).pages():
            yield [m for m in page if m.seq not in pending]
        if folded:
            yield list(folded)

    def _history(self, partition: Partition, session: SessionState) -> history.StoredMessages:
        return history.StoredMessages(self.records, partition, session)

    @staticmethod
    def _require_open(session: SessionState) -> None:
        if session.status != OPEN:
            raise FailedPrecondition(f"session {session.id!r} has ended")

    async def _compress_if_due(
        self, session: SessionState
    ) -> tuple[list[SessionMessage], tuple[Degradation, ...]]:
        c = self.compression(session)
        messages = session.messages
        if len(messages) <= c.keep:
            return [], ()
        due = len(messages) >= c.threshold
        if not due:
            tokens = sum(self.counter.count(message_line(m)) for m in messages)
            due = tokens >= c.token_ratio * c.budget
        if not due:
            return [], ()
        cut = len(messages) - c.keep
        result = await self.summarizer.summarize(session.summary, messages[:cut])
        return session.fold(cut, result.text, result.method, result.degraded), result.degraded

    async def _rebuild_summary(
        self, partition: Partition, session: SessionState
    ) -> tuple[Degradation, ...]:
        """The summary anew from the folded messages that remain, a threshold's worth
        at a time (as compression built it)."""
        chunk = self.compression(session).threshold
        summary = SummaryResult("", self.summarizer.preferred_method)
        notes: list[Degradation] = []
        stored = self._history(partition, session)
        after = 0
        while True:
            page = await stored.folded(after_seq=after, limit=chunk)
            if not page:
                break
            summary = await self.summarizer.summarize(summary.text, page)
            notes.extend(summary.degraded)
            after = page[-1].seq
        session.summary = summary.text
        session.summarizer = summary.method if summary.text else ""
        session.summary_degraded = list(summary.degraded)
        return tuple(dict.fromkeys(notes))
