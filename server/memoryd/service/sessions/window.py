"""A session's window: fixed zone, summary, then the most recent turns that fit the
token budget, never over it.

Token counts: each fixed-zone entry is counted as ``kind: content``, the summary as
its text and each message as ``role(name): content`` (``message_line``);
``tokens_used`` is their sum. What the budget cuts is said in ``degraded``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from memoryd.domain.agent_state import (
    FixedZoneEntry,
    FixedZoneKind,
    SessionMessage,
    SessionWindow,
)
from memoryd.domain.requests import Degradation
from memoryd.service.common.tokens import TokenCounter, truncate_to_tokens
from memoryd.service.sessions.record import SessionState
from memoryd.service.sessions.summarize import message_line

#: Component of degradations caused by the token budget (truncation), not a dependency.
BUDGET_COMPONENT = "token_budget"


def fixed_line(entry: FixedZoneEntry) -> str:
    """A fixed-zone entry as counted (and rendered): ``kind: content``."""
    return f"{entry.kind.value}: {entry.content}"


def _fixed_renderer(kind: FixedZoneKind) -> Callable[[str], str]:
    return lambda content: f"{kind.value}: {content}"


def fitted_window(
    session: SessionState, budget: int, counter: TokenCounter, *, summarizer: str
) -> SessionWindow:
    """``session``'s window within ``budget`` tokens (``summarizer``: the method named
    when the session has no summary yet)."""
    count = counter.count
    degraded = list(session.summary_degraded) if session.summary else []
    fixed, used = _fit_fixed_zone(session.fixed_zone, budget, counter, degraded)

    summary = session.summary
    if summary and used + count(summary) > budget:
        summary = truncate_to_tokens(counter, summary, budget - used)
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
        summarizer=session.summarizer or summarizer,
        token_counter=counter.name,
        degraded=tuple(dict.fromkeys(degraded)),
        summarized_through_seq=session.summarized_through_seq,
        stored_messages=session.stored_messages,
    )


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
