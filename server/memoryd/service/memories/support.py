"""Neighbour support: a hybrid candidate's relevance raised by its session neighbours'.

In a conversation the evidence for a question comes in runs: the turn that answers it
often sits beside turns that match it better ("Yess they gave me Moon!" beside "the
other family ... so I got him"). Each candidate with a session position (its session
and turn number, domain/conversation.py) takes support from the most relevant other
candidate within ``recall.neighbour_window`` turns of it in the same session:
relevance r becomes r + w * s * (1 - r), s that neighbour's relevance and w
``recall.neighbour_weight``. It stays in 0..1, never falls, and is unchanged for a
memory without a position or without a candidate beside it, so a store that holds no
conversations ranks as before. Only candidates are read (no store access): a turn
that no search found gives no support. Unlike context expansion
(service/memories/context.py) nothing is added to the results; their order changes.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from memoryd.config import RecallSettings
from memoryd.domain.conversation import SessionPosition, position_of
from memoryd.service.memories.hybrid import Candidate


def with_neighbour_support(
    ranked: Sequence[Candidate], settings: RecallSettings
) -> list[Candidate]:
    """``ranked`` re-scored with its neighbours' support, best first (ties keep the
    order they had)."""
    weight, window = settings.neighbour_weight, settings.neighbour_window
    if weight <= 0 or window <= 0 or len(ranked) < 2:
        return list(ranked)
    positions = [position_of(c.memory.metadata) for c in ranked]
    best: dict[tuple[str, int], float] = {}
    for c, at in zip(ranked, positions, strict=True):
        if at is not None:
            key = (at.session_id, at.sequence)
            best[key] = max(best.get(key, 0.0), c.relevance)
    out = []
    for c, at in zip(ranked, positions, strict=True):
        support = _support(best, at, window) if at is not None else 0.0
        relevance = c.relevance + weight * support * (1.0 - c.relevance)
        out.append(dataclasses.replace(c, relevance=relevance) if support > 0 else c)
    return sorted(out, key=lambda c: -c.relevance)


def _support(best: dict[tuple[str, int], float], at: SessionPosition, window: int) -> float:
    """The best relevance among the candidates up to ``window`` turns either side."""
    return max(
        best.get((at.session_id, at.sequence + step), 0.0)
        for distance in range(1, window + 1)
        for step in (-distance, distance)
    )
