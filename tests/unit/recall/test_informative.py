"""Common words cannot carry a full-text match (memoryd.text.informative): the hot
text index and the in-process store mark the same hits, and hybrid recall leaves the
uninformative ones out of the fusion."""

from __future__ import annotations

import numpy as np

from memoryd.domain.models import MemoryFilter
from memoryd.domain.requests import MemoryDraft, RecallQuery
from memoryd.storage.bm25 import query_terms
from memoryd.storage.hot.text import TextIndex, build_text_base

from .conftest import DIM, MakeRig, scope_for, unit

S = scope_for()
DOCS = [
    "The user is allergic to peanuts",
    "The user has a dog named Biscuit",
    "The user lives in Lisbon",
    "Biscuit the dog likes the park",
]


def flags(index: TextIndex, query: str) -> dict[int, bool]:
    slots, _, informative = index.candidates(query_terms(query), np.ones(4, dtype=bool), 10)
    return dict(zip(slots.tolist(), informative.tolist(), strict=True))


def test_the_text_index_marks_matches_on_common_terms_alone() -> None:
    base = build_text_base(list(enumerate(DOCS)))
    assert base is not None
    index = TextIndex(base)
    # "user" is in 3 of 4 memories; "dog" in 2 (not more than half): informative.
    assert flags(index, "does the user have a dog?") == {0: False, 1: True, 2: False, 3: True}
    # A query word no memory holds is what the question is about: "user" alone
    # carries nothing then.
    assert flags(index, "what pet does the user have") == {0: False, 1: False, 2: False}
    # Common terms only: there is nothing better to go by, every match counts.
    assert flags(index, "the user") == {0: True, 1: True, 2: True}


async def test_the_in_process_store_agrees_with_the_index(make_rig: MakeRig) -> None:
    rig = await make_rig()
    for i, text in enumerate(DOCS):
        await rig.service.remember(S, MemoryDraft(text, embedding=unit(np.eye(DIM)[i])))
    base = build_text_base(list(enumerate(DOCS)))
    assert base is not None
    index = TextIndex(base)
    for query in ["does the user have a dog?", "what pet does the user have", "the user"]:
        hits = await rig.store.text_search(S.partition, query, MemoryFilter(), 10)
        by_store = {DOCS.index(h.memory.content): h.informative for h in hits}
        assert by_store == flags(index, query)


async def test_hybrid_recall_ranks_by_vector_when_text_matches_only_common_words(
    make_rig: MakeRig,
) -> None:
    rig = await make_rig()
    query = unit(np.eye(DIM)[1] + 0.1 * np.eye(DIM)[0])
    for i, text in enumerate(DOCS[:3]):
        # The dog memory is the vector match; the peanuts one is closest in length.
        vector = unit(np.eye(DIM)[i] + (0.0 if i == 1 else 0.05) * np.eye(DIM)[5])
        await rig.service.remember(S, MemoryDraft(text, embedding=vector))
    hits = await rig.store.text_search(
        S.partition, "what pet does the user have", MemoryFilter(), 10
    )
    assert hits and not any(h.informative for h in hits)
    found = await rig.service.recall(
        S, RecallQuery(query="what pet does the user have", embedding=query, hybrid=True)
    )
    assert found.results[0].memory.content == "The user has a dog named Biscuit"
    assert all(r.components.keyword == 0 for r in found.results)
