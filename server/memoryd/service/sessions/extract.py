"""What EndSession keeps as long-term memories.

With an LLM: the memories it extracts from the summary and the latest turns. Without
one (or when it fails): every fact sentence a user said in the session (see
memoryd.text.facts: facts only, no filler, requests or talk about the conversation)
as its own memory, a preference or a fact, plus the summary as one episode without
the lines already kept as facts (the episode holding "My name is Alice" among twenty
other lines outranked the fact itself for "what is the user's name?"). Nothing a
user stated is dropped for want of room: past ``max_items`` the remaining sentences
are packed, in order, into episode memories of at most ``max_bytes`` each.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime

from memoryd.config import LimitsSettings, SessionSettings
from memoryd.domain.agent_state import MessageRole, SessionMessage
from memoryd.domain.models import MemoryType, Provenance, ProvenanceKind, SecurityLevel
from memoryd.domain.principal import CallScope
from memoryd.domain.requests import Degradation, MemoryDraft
from memoryd.service.common.llm import LLM_COMPONENT, LLMError
from memoryd.service.memories.service import MemoryService
from memoryd.service.sessions.record import SessionState
from memoryd.service.sessions.summarize import ExtractedMemory, Summarizer
from memoryd.text.facts import is_fact_sentence, is_preference, sentences

#: Tag of every memory made from a user's fact sentences packed together.
PACKED_TAG = "session-facts"
SESSION_SOURCE_NAME = "session"
SESSION_TAG = "session"
FALLBACK_NOTE = "kept the users' fact sentences and the summary as an episode"


def _normalised(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def fact_sentences(messages: Iterable[SessionMessage]) -> list[str]:
    """Every distinct fact sentence the users said, in order."""
    seen: set[str] = set()
    out = []
    for message in messages:
        if message.role is not MessageRole.USER:
            continue
        for sentence in sentences(message.content):
            key = _normalised(sentence)
            if key not in seen and is_fact_sentence(sentence):
                seen.add(key)
                out.append(sentence)
    return out


def _cut(text: str, max_bytes: int) -> str:
    return text.encode("utf-8")[:max_bytes].decode("utf-8", errors="ignore")


def _packs(facts: list[str], max_bytes: int) -> list[str]:
    """``facts`` joined by newlines into texts of at most ``max_bytes`` each."""
    packs: list[str] = []
    current: list[str] = []
    size = 0
    for fact in facts:
        fact = _cut(fact, max_bytes)
        cost = len(fact.encode()) + 1
        if current and size + cost > max_bytes:
            packs.append("\n".join(current))
            current, size = [], 0
        current.append(fact)
        size += cost
    if current:
        packs.append("\n".join(current))
    return packs


def deterministic_items(
    messages: Iterable[SessionMessage], summary: str, *, max_items: int, max_bytes: int
) -> list[ExtractedMemory]:
    """The users' fact sentences and the summary as an episode (see the module
    docstring); at most ``max_items`` memories unless the facts need more room."""
    facts = fact_sentences(messages)
    room = max(1, max_items - (1 if summary.strip() else 0))
    single = facts
    packed: list[str] = []
    if len(facts) > room:
        # Keep as many single facts as leave room for the packs of the rest.
        for keep in range(room - 1, -1, -1):
            packed = _packs(facts[keep:], max_bytes)
            if keep + len(packed) <= room or keep == 0:
                single = facts[:keep]
                break
    items = [
        ExtractedMemory(
            _cut(fact, max_bytes),
            MemoryType.PREFERENCE if is_preference(fact) else MemoryType.FACT,
        )
        for fact in single
    ]
    items.extend(ExtractedMemory(text, MemoryType.EPISODE, tags=(PACKED_TAG,)) for text in packed)
    episode = _without(summary, {_normalised(f) for f in single})
    if episode:
        items.append(ExtractedMemory(_cut(episode, max_bytes), MemoryType.EPISODE))
    return items


def _without(summary: str, facts: set[str]) -> str:
    """The summary's lines (``who: sentence``) but those quoting a kept fact, the
    user's own in their words alone: "user" on every other line made an episode
    match every question about "the user" by its full text."""
    out = []
    for line in summary.splitlines():
        who, sep, sentence = line.strip().partition(": ")
        if not sep:
            who, sentence = "", line.strip()
        if not sentence or _normalised(sentence) in facts:
            continue
        out.append(sentence if who in ("", MessageRole.USER.value) else f"{who}: {sentence}")
    return "\n".join(out)


@dataclass(frozen=True, slots=True)
class Extractor:
    """What turns a session's turns into memory drafts: the summarizer (and its LLM,
    if any), the session settings and the limits the drafts are cut to."""

    summarizer: Summarizer
    settings: SessionSettings
    limits: LimitsSettings

    async def session_drafts(
        self,
        scope: CallScope,
        session: SessionState,
        messages: Sequence[SessionMessage],
        now: datetime,
    ) -> tuple[list[MemoryDraft], list[Degradation]]:
        """Drafts of the memories EndSession keeps (``messages``: every stored message),
        and why the deterministic path was taken when an LLM is configured."""
        settings = self.settings
        notes: list[Degradation] = []
        items: list[ExtractedMemory] | None = None
        if self.summarizer.llm is not None and (session.summary or messages):
            try:
                items = await self.summarizer.extract(
                    session.summary,
                    session.messages or messages[-settings.keep_recent_messages :],
                    max_items=settings.max_extracted_memories,
                )
            except LLMError as exc:
                notes.append(Degradation(LLM_COMPONENT, f"{exc.message}; {FALLBACK_NOTE}"))
        if items is None:
            items = deterministic_items(
                messages,
                session.summary,
                max_items=settings.max_extracted_memories,
                max_bytes=self.limits.max_content_bytes,
            )
        return _drafts(scope, session.id, items, self.limits, now), notes

    async def summary_drafts(
        self,
        scope: CallScope,
        session_id: str,
        summary: str,
        folded: Sequence[SessionMessage],
        now: datetime,
        *,
        use_llm: bool = True,
    ) -> tuple[list[MemoryDraft], list[Degradation]]:
        """Drafts of what a summary's making keeps (the layered-memory design extracts
        "when a context summary is made", not only when the session ends): with an LLM,
        what it extracts from the summary and the turns just folded into it; without one
        (or when it fails), the users' fact sentences of those turns. No episode: the
        summary is still growing (EndSession keeps it; its repeats of these facts are
        merged by deduplication). ``use_llm`` False: the LLM just failed to summarise,
        so the rules extract (the summary's degradation already says so)."""
        most = self.settings.max_extracted_memories
        notes: list[Degradation] = []
        if self.summarizer.llm is not None and use_llm:
            try:
                items = await self.summarizer.extract(summary, list(folded), max_items=most)
                return _drafts(scope, session_id, items, self.limits, now), notes
            except LLMError as exc:
                notes.append(Degradation(LLM_COMPONENT, f"{exc.message}; {FALLBACK_NOTE}"))
        items = deterministic_items(
            folded, "", max_items=most, max_bytes=self.limits.max_content_bytes
        )
        return _drafts(scope, session_id, items, self.limits, now), notes

    async def remember_folded(
        self,
        memories: MemoryService,
        scope: CallScope,
        session_id: str,
        folded: tuple[str, Sequence[SessionMessage]],
        now: datetime,
        *,
        use_llm: bool = True,
    ) -> tuple[list[str], list[Degradation]]:
        """Remember what the turns just folded into the summary taught (``folded``: the
        summary and those turns); the ids remembered and any degradation."""
        summary, messages = folded
        drafts, notes = await self.summary_drafts(
            scope, session_id, summary, messages, now, use_llm=use_llm
        )
        if not drafts:
            return [], notes
        outcomes = await memories.remember_batch(scope, drafts, field_prefix="extracted")
        return list(dict.fromkeys(o.memory.id for o in outcomes)), notes


def _drafts(
    scope: CallScope,
    session_id: str,
    items: Sequence[ExtractedMemory],
    limits: LimitsSettings,
    now: datetime,
) -> list[MemoryDraft]:
    source = Provenance(
        kind=ProvenanceKind.AGENT,
        name=SESSION_SOURCE_NAME,
        retrieved_at=now,
        locator=f"session:{session_id}",
    )
    level = min(SecurityLevel.INTERNAL, scope.clearance)
    return [
        MemoryDraft(
            content=_cut(item.content, limits.max_content_bytes),
            memory_type=item.memory_type,
            tags=tuple(
                t
                for t in dict.fromkeys((SESSION_TAG, *item.tags))
                if len(t.encode()) <= limits.max_tag_bytes
            )[: limits.max_tags],
            importance=item.importance,
            security_level=level,
            metadata={"session_id": session_id},
            source=source,
        )
        for item in items
    ]
