"""Pseudo-relevance feedback on the text side (service/memories/feedback.py): the terms most
particular to the best first-round hits find evidence that shares no word with the
question; off by default."""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np

from memoryd.config import RecallSettings
from memoryd.domain.models import Memory
from memoryd.domain.requests import MemoryDraft, RecallQuery
from memoryd.service.memories.feedback import feedback_terms
from memoryd.service.memories.hybrid import Candidate

from .conftest import DIM, MakeRig, scope_for, unit, with_cosine

S = scope_for()
CHAT = [
    ("Kate: I took an Italian cooking class on Saturday", 0.50),
    ("Kate: we learned tiramisu and osso buco", 0.45),
    ("Elise: sounds delicious, was the osso buco hard?", 0.10),
    ("Elise: I went skiing in Colorado", 0.30),
    ("Kate: the weather was lovely", 0.20),
    ("Elise: lovely weather here too", 0.19),
]


def _candidate(text: str) -> Candidate:
    t = datetime(2024, 1, 1, tzinfo=UTC)
    memory = Memory(id=text, tenant_id="t", agent_id="a", content=text, created_at=t, updated_at=t)
    return Candidate(memory, 0.0, 0.0, 0.0, 1.0)


def test_terms_concentrated_in_the_seeds_not_the_pool_or_the_query() -> None:
    ranked = [_candidate(text) for text, _ in CHAT]
    terms = feedback_terms("What did Kate learn in the cooking class?", ranked, 2, 7)
    # "kate" is asked and in half the pool; "tiramisu"/"osso"/"buco" are the
    # seeds' own; "cook" and "class" are in the query.
    assert "kate" not in terms and "cook" not in terms and "class" not in terms
    assert {"tiramisu", "osso", "buco"} <= set(terms)


async def test_a_second_round_finds_what_the_first_hits_point_to(make_rig: MakeRig) -> None:
    query = unit(np.eye(DIM)[0])
    question = "What did Kate cook in the cooking class?"
    results = {}
    for terms in (0, 6):
        rig = await make_rig(
            recall=RecallSettings(feedback_terms=terms, feedback_seeds=2, feedback_weight=0.5)
        )
        for seed, (text, cosine) in enumerate(CHAT):
            draft = MemoryDraft(text, embedding=with_cosine(query, cosine, seed=seed))
            await rig.service.remember(S, draft)
        out = await rig.service.recall(S, RecallQuery(query=question, embedding=query, limit=6))
        results[terms] = [r.memory.content for r in out.results]
    assert RecallSettings().feedback_terms == 0
    # Elise's question about the osso buco shares no word with the question and is the
    # farthest vector: last without feedback, above the other weather turn with it.
    osso = "Elise: sounds delicious, was the osso buco hard?"
    weather = "Elise: lovely weather here too"
    assert results[0].index(osso) > results[0].index(weather)
    assert results[6].index(osso) < results[6].index(weather)
