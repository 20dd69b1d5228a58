"""Sessions (short-term memory): the message log of a run, its fixed zone and summary.

A session is one SESSION record: the fixed zone (trigger, focus, instructions; never
compressed), the summary of older turns and the turns still kept verbatim. When the
verbatim turns reach ``compress_threshold_messages`` or ``compress_token_ratio`` of
``context_budget_tokens``, all but the last ``keep_recent_messages`` are folded into
the summary (so a record holds fewer than ``compress_threshold_messages`` turns plus at
most ``max_fixed_zone_entries`` entries; with the default limits well under 2 MiB).

Appending to an unknown session, or injecting into one, creates it. A session expires
``ttl`` after its last append or injection and then reads as absent. EndSession closes
it (later appends and injections are FAILED_PRECONDITION; the window stays readable).

Window token counts: each fixed-zone entry is counted as ``kind: content``, the summary
as its text and each message as ``role(name): content`` (see :func:`message_line`);
``tokens_used`` is their sum and never exceeds the budget.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace
from datetime import datetime, timedelta

from memoryd.config import LimitsSettings, SessionSettings
from memoryd.domain.agent_state import (
    AppendOutcome,
    EndSessionOutcome,
    FixedZoneEntry,
    FixedZoneKind,
    MessageDraft,
    MessageRole,
    SessionMessage,
    SessionWindow,
)
from memoryd.domain.errors import FailedPrecondition, NotFound, ResourceExhausted
from memoryd.domain.limits import MAX_TTL
from memoryd.domain.models import (
    MemoryType,
    Partition,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
    utcnow,
)
from memoryd.domain.principal import CallScope
from memoryd.domain.records import RecordKind
from memoryd.domain.requests import Degradation, MemoryDraft
from memoryd.service.llm import LLM_COMPONENT, LLMError
from memoryd.service.memory import MemoryService
from memoryd.service.quotas import Quotas
from memoryd.service.scope_locks import KeyedLocks
from memoryd.service.session_record import CLOSED, OPEN, SessionState
from memoryd.service.summarize import ExtractedMemory, Summarizer, message_line
from memoryd.service.tokens import TokenCounter, truncate_to_tokens
from memoryd.service.validation import Violations
from memoryd.service.working import check_identifier, purge_expired_records
from memoryd.storage.records import RecordStore

#: Component of degradations caused by the token budget (truncation), not a dependency.
BUDGET_COMPONENT = "token_budget"
#: Largest token_budget a window request may ask for.
MAX_TOKEN_BUDGET = 10_000_000
SESSION_SOURCE_NAME = "session"
SESSION_TAG = "session"


def fixed_line(entry: FixedZoneEntry) -> str:
    """A fixed-zone entry as counted (and rendered): ``kind: content``."""
    return f"{entry.kind.value}: {entry.content}"


def _fixed_renderer(kind: FixedZoneKind) -> Callable[[str], str]:
    return lambda content: f"{kind.value}: {content}"


class SessionService:
    def __init__(
        self,
        *,
        records: RecordStore,
        memories: MemoryService,
        summarizer: Summarizer,
        counter: TokenCounter,
        settings: SessionSettings,
        limits: LimitsSettings,
        quotas: Quotas | None = None,
        clock: Callable[[], datetime] = utcnow,
    ) -> None:
        self._records = records
        self._quotas = quotas
        self._memories = memories
        self._summarizer = summarizer
        self._counter = counter
        self._settings = settings
        self._limits = limits
        self._clock = clock
        self._locks = KeyedLocks()

    @property
    def token_counter(self) -> TokenCounter:
        return self._counter

    # ------------------------------------------------------------------ writes

    async def append(
        self,
        scope: CallScope,
        session_id: str,
        drafts: Sequence[MessageDraft],
        ttl: timedelta | None = None,
    ) -> AppendOutcome:
        v = Violations()
        self._check_session_id(v, session_id)
        self._check_ttl(v, ttl)
        if not drafts:
            v.add("messages", "must not be empty")
        elif len(drafts) > self._limits.max_batch_size:
            v.add(
                "messages",
                f"has {len(drafts)} messages; the limit is {self._limits.max_batch_size} "
                "(limits.max_batch_size)",
            )
        now = self._clock()
        for i, draft in enumerate(drafts):
            self._check_message(v, draft, f"messages[{i}].", now)
        v.raise_if_any()

        async with self._locks.hold((scope.partition, session_id)):
            now = self._clock()
            session = await self._load(scope.partition, session_id, now)
            if session is None:
                session = self._new_session(session_id, now)
            self._require_open(session)
            limit = self._settings.max_messages
            if session.message_count + len(drafts) > limit:
                raise ResourceExhausted(
                    f"session {session_id!r} has {session.message_count} messages; appending "
                    f"{len(drafts)} would exceed sessions.max_messages ({limit})"
                )
            if self._quotas is not None:  # quotas.max_session_messages, per tenant
                self._quotas.check_session_messages(
                    scope.partition.tenant_id, session.message_count, len(drafts)
                )
            for draft in drafts:
                session.message_count += 1
                assert draft.role is not None  # checked above
                session.messages.append(
                    SessionMessage(
                        role=draft.role,
                        content=draft.content,
                        seq=session.message_count,
                        created_at=draft.created_at or now,
                        name=draft.name,
                        tool_call_id=draft.tool_call_id,
                    )
                )
            if ttl is not None:
                session.ttl_s = ttl.total_seconds()
            compressed, degraded = await self._compress_if_due(session)
            await self._records.put_records(scope.partition, [session.record(self._clock())])
        return AppendOutcome(session.message_count, compressed, degraded)

    async def inject(
        self, scope: CallScope, session_id: str, kind: FixedZoneKind | None, content: str
    ) -> list[FixedZoneEntry]:
        """Add to the fixed zone; a trigger or focus replaces the previous one."""
        v = Violations()
        self._check_session_id(v, session_id)
        if kind is None:
            v.add("kind", "must be set (trigger, focus or instruction)")
        self._check_text(v, content, "content", required=True)
        v.raise_if_any()
        assert kind is not None
        async with self._locks.hold((scope.partition, session_id)):
            now = self._clock()
            session = await self._load(scope.partition, session_id, now)
            if session is None:
                session = self._new_session(session_id, now)
            self._require_open(session)
            zone = session.fixed_zone
            if kind is not FixedZoneKind.INSTRUCTION:
                zone = [e for e in zone if e.kind is not kind]
            if len(zone) >= self._settings.max_fixed_zone_entries:
                raise ResourceExhausted(
                    f"session {session_id!r} has {len(zone)} fixed-zone entries, the limit "
                    f"(sessions.max_fixed_zone_entries)"
                )
            session.fixed_zone = [*zone, FixedZoneEntry(kind, content, now)]
            await self._records.put_records(scope.partition, [session.record(now)])
        return list(session.fixed_zone)

    async def end(self, scope: CallScope, session_id: str, *, extract: bool) -> EndSessionOutcome:
        v = Violations()
        self._check_session_id(v, session_id)
        v.raise_if_any()
        async with self._locks.hold((scope.partition, session_id)):
            now = self._clock()
            session = await self._get(scope.partition, session_id, now)
            self._require_open(session)
            degraded: list[Degradation] = []
            if session.messages:
                result = await self._summarizer.summarize(session.summary, session.messages)
                summary = result.text
                degraded.extend(result.degraded)
                session.summarizer = result.method
                session.summary_degraded = list(result.degraded)
            else:
                summary = session.summary
                degraded.extend(session.summary_degraded)
            extracted = []
            if extract:
                drafts, notes = await self._extraction_drafts(scope, session, summary, now)
                degraded.extend(notes)
                if drafts:
                    outcomes = await self._memories.remember_batch(
                        scope, drafts, field_prefix="extracted"
                    )
                    extracted = [o.memory for o in outcomes]
            session.status = CLOSED
            session.summary = summary
            await self._records.put_records(
                scope.partition, [session.record(self._clock(), touch=False)]
            )
        return EndSessionOutcome(summary, extracted, tuple(dict.fromkeys(degraded)))

    async def purge_expired(self, partition: Partition, now: datetime | None = None) -> int:
        """Delete the partition's expired sessions (for maintenance); returns how many."""
        return await purge_expired_records(
            self._records, partition, RecordKind.SESSION, now or self._clock()
        )

    # ------------------------------------------------------------------ reads

    async def window(
        self, scope: CallScope, session_id: str, token_budget: int | None = None
    ) -> SessionWindow:
        """Fixed zone, summary, then the most recent turns that fit, never over budget."""
        v = Violations()
        self._check_session_id(v, session_id)
        if token_budget is not None and not 0 < token_budget <= MAX_TOKEN_BUDGET:
            v.add("token_budget", f"must be between 1 and {MAX_TOKEN_BUDGET}")
        v.raise_if_any()
        session = await self._get(scope.partition, session_id, self._clock())
        budget = token_budget or self._settings.context_budget_tokens
        count = self._counter.count
        degraded = list(session.summary_degraded) if session.summary else []
        used = 0

        fixed: list[FixedZoneEntry] = []
        for entry in session.fixed_zone:
            cost = count(fixed_line(entry))
            if used + cost > budget:
                room = budget - used
                text = truncate_to_tokens(
                    self._counter, entry.content, room, _fixed_renderer(entry.kind)
                )
                total = sum(count(fixed_line(e)) for e in session.fixed_zone)
                degraded.append(
                    Degradation(
                        BUDGET_COMPONENT,
                        f"the fixed zone needs {total} tokens, more than token_budget {budget}: "
                        "truncated",
                    )
                )
                if text:
                    entry = replace(entry, content=text)
                    fixed.append(entry)
                    used += count(fixed_line(entry))
                break
            fixed.append(entry)
            used += cost

        summary = session.summary
        if summary and used + count(summary) > budget:
            summary = truncate_to_tokens(self._counter, summary, budget - used)
            degraded.append(
                Degradation(
                    BUDGET_COMPONENT,
                    "the summary was truncated to fit token_budget"
                    if summary
                    else "the summary did not fit token_budget",
                )
            )
        used += count(summary) if summary else 0

        recent: list[SessionMessage] = []
        for message in reversed(session.messages):
            cost = count(message_line(message))
            if used + cost > budget:
                break
            recent.append(message)
            used += cost
        recent.reverse()
        return SessionWindow(
            fixed_zone=fixed,
            summary=summary,
            recent=recent,
            tokens_used=used,
            summarizer=session.summarizer or self._summarizer.preferred_method,
            token_counter=self._counter.name,
            degraded=tuple(dict.fromkeys(degraded)),
        )

    # ------------------------------------------------------------------ helpers

    async def _load(
        self, partition: Partition, session_id: str, now: datetime
    ) -> SessionState | None:
        found = await self._records.get_records(partition, RecordKind.SESSION, [session_id])
        if not found:
            return None
        record = found[0]
        if record.expires_at is not None and record.expires_at <= now:
            return None
        return SessionState.from_record(record)

    async def _get(self, partition: Partition, session_id: str, now: datetime) -> SessionState:
        session = await self._load(partition, session_id, now)
        if session is None:
            raise NotFound(f"session {session_id!r} not found")
        return session

    def _new_session(self, session_id: str, now: datetime) -> SessionState:
        return SessionState(id=session_id, created_at=now, ttl_s=self._settings.ttl_s)

    @staticmethod
    def _require_open(session: SessionState) -> None:
        if session.status != OPEN:
            raise FailedPrecondition(f"session {session.id!r} has ended")

    async def _compress_if_due(self, session: SessionState) -> tuple[bool, tuple[Degradation, ...]]:
        s = self._settings
        messages = session.messages
        if len(messages) <= s.keep_recent_messages:
            return False, ()
        due = len(messages) >= s.compress_threshold_messages
        if not due:
            tokens = sum(self._counter.count(message_line(m)) for m in messages)
            due = tokens >= s.compress_token_ratio * s.context_budget_tokens
        if not due:
            return False, ()
        cut = len(messages) - s.keep_recent_messages
        result = await self._summarizer.summarize(session.summary, messages[:cut])
        session.summary = result.text
        session.summarizer = result.method
        session.summary_degraded = list(result.degraded)
        session.messages = messages[cut:]
        return True, result.degraded

    async def _extraction_drafts(
        self, scope: CallScope, session: SessionState, summary: str, now: datetime
    ) -> tuple[list[MemoryDraft], list[Degradation]]:
        """Drafts of the memories to keep: the LLM's when it answers, else one episode."""
        notes: list[Degradation] = []
        level = min(SecurityLevel.INTERNAL, scope.clearance)
        source = Provenance(
            kind=ProvenanceKind.AGENT,
            name=SESSION_SOURCE_NAME,
            retrieved_at=now,
            locator=f"session:{session.id}",
        )
        items: list[ExtractedMemory] | None = None
        if self._summarizer.llm is not None and (session.summary or session.messages):
            try:
                items = await self._summarizer.extract(
                    session.summary,
                    session.messages,
                    max_items=self._settings.max_extracted_memories,
                )
            except LLMError as exc:
                notes.append(
                    Degradation(LLM_COMPONENT, f"{exc.message}; kept the summary as one episode")
                )
        if items is None:
            items = [ExtractedMemory(summary, MemoryType.EPISODE)] if summary.strip() else []
        limits = self._limits
        drafts = [
            MemoryDraft(
                content=_cut_bytes(item.content, limits.max_content_bytes),
                memory_type=item.memory_type,
                tags=tuple(
                    t
                    for t in dict.fromkeys((SESSION_TAG, *item.tags))
                    if len(t.encode()) <= limits.max_tag_bytes
                )[: limits.max_tags],
                importance=item.importance,
                security_level=level,
                metadata={"session_id": session.id},
                source=source,
            )
            for item in items
        ]
        return drafts, notes

    # ------------------------------------------------------------------ checks

    def _check_session_id(self, v: Violations, session_id: str) -> None:
        if not session_id:
            v.add("session_id", "must not be empty")
        check_identifier(v, session_id, "session_id", self._settings.max_session_id_bytes)

    @staticmethod
    def _check_ttl(v: Violations, ttl: timedelta | None) -> None:
        if ttl is not None and not timedelta(0) < ttl <= MAX_TTL:
            v.add("ttl", f"must be positive and at most {MAX_TTL.days} days")

    def _check_text(self, v: Violations, text: str, field: str, *, required: bool) -> None:
        if required and not text.strip():
            v.add(field, "must not be empty")
        size = len(text.encode("utf-8"))
        if size > self._settings.max_message_bytes:
            v.add(
                field,
                f"is {size} bytes; the limit is {self._settings.max_message_bytes} "
                "(sessions.max_message_bytes)",
            )
        if "\x00" in text:
            v.add(field, "must not contain NUL characters")

    def _check_message(
        self, v: Violations, draft: MessageDraft, prefix: str, now: datetime
    ) -> None:
        if draft.role is None:
            v.add(f"{prefix}role", "must be set (user, assistant, system or tool)")
        self._check_text(
            v, draft.content, f"{prefix}content", required=draft.role is not MessageRole.TOOL
        )
        for name, value in (("name", draft.name), ("tool_call_id", draft.tool_call_id)):
            check_identifier(v, value, f"{prefix}{name}", self._settings.max_session_id_bytes)
        if draft.created_at is not None and draft.created_at > now:
            v.add(f"{prefix}created_at", "must not be in the future")


def _cut_bytes(text: str, max_bytes: int) -> str:
    """At most ``max_bytes`` of UTF-8, cut at a character boundary."""
    return text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
