"""A session's long-term memory mode (AgentScope's LongTermMemoryMode).

AGENT_CONTROL (a new session's): the agent records and retrieves with its tools
(record_to_memory, retrieve_from_memory); nothing is automatic. STATIC_CONTROL: the
daemon does it ("retrieve before reasoning, record after the reply"): each assistant
reply appended (an assistant message with text and no tool calls) is recorded with the
user turn it answers, and the window retrieves the memories relevant to the newest
user message. BOTH: the two at once.

Recording a turn keeps, with an LLM configured, what the LLM extracts from it; without
one (or when it fails), every fact sentence the user said (as EndSession extracts
them: memoryd.service.sessions.extract) and the exchange itself as an episode. Each
memory names its session and the reply's seq (metadata, provenance locator
``session:<id>#<seq>``); near-duplicates update the existing memory. A recording that
fails leaves the append done and says so in its degradations.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from memoryd.config import LimitsSettings, SessionSettings
from memoryd.domain.agent_state import MessageRole, SessionMessage
from memoryd.domain.errors import MemorydError
from memoryd.domain.models import (
    Clock,
    Memory,
    MemoryType,
    Provenance,
    ProvenanceKind,
    SecurityLevel,
)
from memoryd.domain.principal import CallScope
from memoryd.domain.requests import Degradation, MemoryDraft, RecallQuery
from memoryd.service.common.llm import LLM_COMPONENT, LLMError
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.extract import SESSION_SOURCE_NAME, SESSION_TAG, deterministic_items
from memoryd.service.sessions.record import SessionState
from memoryd.service.sessions.summarize import ExtractedMemory, Summarizer, message_line

#: Component of the degradations of automatic recording and retrieval.
COMPONENT = "long_term_memory"
#: Tag of the memories static control records.
STATIC_TAG = "static_control"


def is_reply(message: SessionMessage) -> bool:
    """An assistant's answer (text, no tool calls): what static control records."""
    return (
        message.role is MessageRole.ASSISTANT
        and bool(message.content.strip())
        and not message.tool_calls
    )


def turns(messages: Sequence[SessionMessage], appended: int) -> list[list[SessionMessage]]:
    """For each reply among the last ``appended`` of ``messages``: the user messages
    since the assistant's previous reply, then the reply."""
    out: list[list[SessionMessage]] = []
    start = len(messages) - appended
    for i in range(start, len(messages)):
        if not is_reply(messages[i]):
            continue
        users: list[SessionMessage] = []
        for earlier in reversed(messages[:i]):
            if is_reply(earlier):
                break
            if earlier.role is MessageRole.USER:
                users.append(earlier)
        out.append([*reversed(users), messages[i]])
    return out


@dataclass(frozen=True, kw_only=True)
class LongTermMemory:
    """Static control's recording and retrieval, on the memory service."""

    memories: MemoryService
    summarizer: Summarizer
    settings: SessionSettings
    limits: LimitsSettings
    clock: Clock

    async def record(
        self, scope: CallScope, session_id: str, exchanges: Sequence[list[SessionMessage]]
    ) -> tuple[tuple[str, ...], tuple[Degradation, ...]]:
        """Remember ``exchanges`` (see :func:`turns`); the ids kept and what failed."""
        drafts: list[MemoryDraft] = []
        notes: list[Degradation] = []
        for exchange in exchanges:
            items = await self._items(exchange, notes)
            drafts.extend(self._draft(scope, session_id, exchange[-1], item) for item in items)
        if not drafts:
            return (), tuple(notes)
        try:
            outcomes = await self.memories.remember_batch(scope, drafts, field_prefix="recorded")
        except MemorydError as exc:
            notes.append(Degradation(COMPONENT, f"the reply was not recorded: {exc.message}"))
            return (), tuple(notes)
        ids = tuple(dict.fromkeys(o.memory.id for o in outcomes))
        return ids, tuple(dict.fromkeys(notes))

    async def _items(
        self, exchange: list[SessionMessage], notes: list[Degradation]
    ) -> list[ExtractedMemory]:
        if self.summarizer.llm is not None:
            try:
                return await self.summarizer.extract(
                    "", exchange, max_items=self.settings.max_extracted_memories
                )
            except LLMError as exc:
                notes.append(
                    Degradation(LLM_COMPONENT, f"{exc.message}; kept the user's facts and the turn")
                )
        max_bytes = self.limits.max_content_bytes
        facts = deterministic_items(
            [m for m in exchange if m.role is MessageRole.USER],
            "",
            max_items=self.settings.max_extracted_memories,
            max_bytes=max_bytes,
        )
        episode = "\n".join(message_line(m) for m in exchange)
        cut = episode.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")
        return [*facts, ExtractedMemory(cut, MemoryType.EPISODE)]

    def _draft(
        self, scope: CallScope, session_id: str, reply: SessionMessage, item: ExtractedMemory
    ) -> MemoryDraft:
        limits = self.limits
        tags = tuple(
            t
            for t in dict.fromkeys((SESSION_TAG, STATIC_TAG, *item.tags))
            if len(t.encode()) <= limits.max_tag_bytes
        )[: limits.max_tags]
        return MemoryDraft(
            content=item.content,
            memory_type=item.memory_type,
            tags=tags,
            importance=item.importance,
            security_level=min(SecurityLevel.INTERNAL, scope.clearance),
            metadata={"session_id": session_id, "seq": reply.seq},
            source=Provenance(
                kind=ProvenanceKind.AGENT,
                name=SESSION_SOURCE_NAME,
                retrieved_at=self.clock(),
                locator=f"session:{session_id}#{reply.seq}",
            ),
        )

    async def retrieve(
        self, scope: CallScope, session: SessionState
    ) -> tuple[list[Memory], tuple[Degradation, ...]]:
        """Memories relevant to the newest user message of the turns not yet summarised,
        best first; those recorded from turns still in the tail are left out (the
        window shows the turns themselves)."""
        query = next(
            (m.content for m in reversed(session.messages) if m.role is MessageRole.USER), ""
        )
        if not query.strip():
            return [], ()
        cut = query.encode("utf-8")[: self.limits.max_content_bytes]
        request = RecallQuery(
            query=cut.decode("utf-8", errors="ignore"), limit=self.settings.long_term_memory_limit
        )
        try:
            outcome = await self.memories.recall(scope, request)
        except MemorydError as exc:
            return [], (Degradation(COMPONENT, f"nothing was retrieved: {exc.message}"),)
        shown = {m.seq for m in session.messages}
        found = [
            hit.memory
            for hit in outcome.results
            if not (
                hit.memory.metadata.get("session_id") == session.id
                and hit.memory.metadata.get("seq") in shown
            )
        ]
        return found, outcome.degraded
