"""A session's window: fixed zone, long-term memories (static control), summary, then
the most recent turns that fit the token budget, never over it.

Token counts: each fixed-zone entry is counted as ``kind: content``, each long-term
memory as its line (``- content``), the summary as its text and each message as
``role(name): content`` (``message_line``); ``tokens_used`` is their sum. What the
budget cuts is said in ``degraded``.

When the summary and every turn not yet summarised fit, the window holds them all.
When they do not, older turns fall out of the window, and they are not lost from it:
the summary is made anew for the window from the stored summary and those turns
(extractive, deterministic) in at least a third of the room, and the newest turn is
always shown, cut to what is left when it alone is too large (said in ``degraded``).
Long-term memories take at most ``long_term_ratio`` of the room after the fixed zone.

With ``merge`` (the session's ``merge_adjacent_messages``) consecutive messages of
the same role and name are one entry (``merged_from_seq``..``seq``): their contents
joined by a blank line, the last one's tool calls kept. Tool results are never joined
(each answers its own call), nor is an assistant message that calls tools to a later
one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from memoryd.domain.agent_state import (
    FixedZoneEntry,
    FixedZoneKind,
    MessageRole,
    SessionMessage,
    SessionWindow,
)
from memoryd.domain.models import Memory
from memoryd.domain.requests import Degradation
from memoryd.service.common.tokens import TokenCounter, truncate_to_tokens
from memoryd.service.sessions.record import SessionState
from memoryd.service.sessions.summarize import extractive_summary, message_line

#: Component of degradations caused by the token budget (truncation), not a dependency.
BUDGET_COMPONENT = "token_budget"
#: Joins the contents of merged messages.
MERGE_SEPARATOR = "\n\n"
#: Marks where a message cut to fit the budget was cut.
CUT_MARK = " […]"
#: Share of the room the summary may claim when the turns do not all fit.
SUMMARY_SHARE = 3


def fixed_line(entry: FixedZoneEntry) -> str:
    """A fixed-zone entry as counted (and rendered): ``kind: content``."""
    return f"{entry.kind.value}: {entry.content}"


def memory_line(memory: Memory) -> str:
    """A long-term memory as counted (and rendered) in the window."""
    return f"- {memory.content}"


def _fixed_renderer(kind: FixedZoneKind) -> Callable[[str], str]:
    return lambda content: f"{kind.value}: {content}"


@dataclass(frozen=True, slots=True)
class WindowOptions:
    """How the window is built beyond its budget."""

    #: The method named when the session has no summary yet.
    summarizer: str
    merge: bool = False
    #: Static control: memories relevant to the newest user message, best first.
    long_term: Sequence[Memory] = ()
    long_term_ratio: float = 0.25


def fitted_window(
    session: SessionState, budget: int, counter: TokenCounter, options: WindowOptions
) -> SessionWindow:
    """``session``'s window within ``budget`` tokens."""
    count = counter.count
    degraded = list(session.summary_degraded) if session.summary else []
    fixed, used = _fit_fixed_zone(session.fixed_zone, budget, counter, degraded)
    memories, memory_text = _fit_long_term(
        options.long_term, int(max(0, budget - used) * options.long_term_ratio), counter
    )
    used += count(memory_text) if memory_text else 0
    entries = merged(session.messages) if options.merge else list(session.messages)
    history = _fit_history(session, entries, budget - used, counter, degraded)
    used += history.tokens
    return SessionWindow(
        fixed_zone=fixed,
        summary=history.summary,
        recent=history.recent,
        tokens_used=used,
        summarizer=history.method or session.summarizer or options.summarizer,
        token_counter=counter.name,
        degraded=tuple(dict.fromkeys(degraded)),
        summarized_through_seq=history.through,
        stored_messages=session.stored_messages,
        long_term_memory_mode=session.long_term_memory_mode,
        long_term_memories=memories,
        long_term_memory=memory_text,
    )


def merged(messages: Sequence[SessionMessage]) -> list[SessionMessage]:
    """``messages`` with runs of the same role and name joined (see the module doc)."""
    out: list[SessionMessage] = []
    for message in messages:
        last = out[-1] if out else None
        if last is not None and _joins(last, message):
            out[-1] = replace(
                message,
                content=MERGE_SEPARATOR.join(c for c in (last.content, message.content) if c),
                merged_from_seq=last.merged_from_seq or last.seq,
                attachment=None,
            )
        else:
            out.append(message)
    return out


def _joins(earlier: SessionMessage, later: SessionMessage) -> bool:
    return (
        earlier.role is later.role
        and earlier.name == later.name
        and earlier.role is not MessageRole.TOOL
        and not earlier.tool_calls
        and earlier.attachment is None
        and later.attachment is None
    )


@dataclass(frozen=True, slots=True)
class _History:
    summary: str
    recent: list[SessionMessage]
    tokens: int
    #: The window's summary covers the stored messages up to this seq.
    through: int
    #: "extractive" when the summary was made for this window, else "".
    method: str = ""


def _fit_history(
    session: SessionState,
    entries: list[SessionMessage],
    room: int,
    counter: TokenCounter,
    degraded: list[Degradation],
) -> _History:
    """The summary and the recent turns in ``room`` tokens."""
    count = counter.count
    summary = session.summary
    summary_cost = count(summary) if summary else 0
    costs = [count(message_line(m)) for m in entries]
    if room <= 0:
        if (summary or entries) and not any(d.component == BUDGET_COMPONENT for d in degraded):
            degraded.append(Degradation(BUDGET_COMPONENT, "no room was left for the turns"))
        return _History("", [], 0, session.summarized_through_seq)
    if summary_cost + sum(costs) <= room:
        return _History(summary, entries, summary_cost + sum(costs), session.summarized_through_seq)

    share = room // SUMMARY_SHARE
    kept = _newest(costs, room - min(summary_cost, share))
    if kept < len(entries) and summary_cost < share:
        kept = _newest(costs, room - share)  # older turns fall out: the summary needs room
    recent = entries[len(entries) - kept :]
    dropped = entries[: len(entries) - kept]
    if not recent and entries:
        newest = _cut_newest(entries[-1], room - share, counter, degraded)
        if newest is not None:
            recent, dropped = [newest], entries[:-1]
    left = room - sum(count(message_line(m)) for m in recent)
    through, method = session.summarized_through_seq, ""
    if dropped:
        summary = extractive_summary(summary, dropped, counter=counter, max_tokens=left)
        through, method = dropped[-1].seq, "extractive"
        first = dropped[0].merged_from_seq or dropped[0].seq
        degraded.append(
            Degradation(
                BUDGET_COMPONENT,
                f"turns {first}..{through} did not fit token_budget: the window's summary "
                "covers them",
            )
        )
    elif summary_cost > left:
        summary = truncate_to_tokens(counter, summary, left)
        degraded.append(
            Degradation(
                BUDGET_COMPONENT,
                "the summary was truncated to fit token_budget"
                if summary
                else "the summary did not fit token_budget",
            )
        )
    tokens = (count(summary) if summary else 0) + room - left
    return _History(summary, recent, tokens, through, method)


def _newest(costs: Sequence[int], room: int) -> int:
    """How many of the newest entries fit ``room``."""
    used = kept = 0
    for cost in reversed(costs):
        if used + cost > room:
            break
        used += cost
        kept += 1
    return kept


def _cut_newest(
    message: SessionMessage, room: int, counter: TokenCounter, degraded: list[Degradation]
) -> SessionMessage | None:
    """The newest turn cut to ``room`` tokens, marked where it was cut; None when not
    even its role fits."""

    def render(content: str) -> str:
        return message_line(replace(message, content=f"{content}{CUT_MARK}"))

    content = truncate_to_tokens(counter, message.content, room, render)
    cut = replace(message, content=f"{content}{CUT_MARK}")
    if counter.count(message_line(cut)) > room:
        cut = replace(message, content="", tool_calls=())
        if counter.count(message_line(cut)) > room:
            return None
    degraded.append(
        Degradation(
            BUDGET_COMPONENT,
            f"the newest turn (seq {message.seq}) alone is over token_budget: cut to fit "
            "(GetSessionMessages has it whole)",
        )
    )
    return cut


def _fit_long_term(
    memories: Sequence[Memory], room: int, counter: TokenCounter
) -> tuple[tuple[Memory, ...], str]:
    """The best memories whose lines fit ``room``, and their text."""
    kept: list[Memory] = []
    lines: list[str] = []
    for memory in memories:
        candidate = "\n".join([*lines, memory_line(memory)])
        if counter.count(candidate) > room:
            continue
        kept.append(memory)
        lines.append(memory_line(memory))
    return tuple(kept), "\n".join(lines)


def _fit_fixed_zone(
    zone: list[FixedZoneEntry],
    budget: int,
    counter: TokenCounter,
    degraded: list[Degradation],
) -> tuple[list[FixedZoneEntry], int]:
    count = counter.count
    fixed: list[FixedZoneEntry] = []
    used = 0
    for entry in zone:
        cost = count(fixed_line(entry))
        if used + cost > budget:
            text = truncate_to_tokens(
                counter, entry.content, budget - used, _fixed_renderer(entry.kind)
            )
            total = sum(count(fixed_line(e)) for e in zone)
            degraded.append(
                Degradation(
                    BUDGET_COMPONENT,
                    f"the fixed zone needs {total} tokens, more than token_budget {budget}: "
                    "truncated",
                )
            )
            if text:
                fixed.append(replace(entry, content=text))
                used += count(fixed_line(fixed[-1]))
            break
        fixed.append(entry)
        used += cost
    return fixed, used
