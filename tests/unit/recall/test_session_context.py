"""Context expansion by session (service/memories/context.py, domain/conversation.py): a
hit's neighbours are the turns of its own session by sequence number, read through the
caller's filter and clearance, ranked just below it and counted against the limit; the
request's context_window overrides the server's default; bad values are rejected naming
the field, storing nothing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from memoryd.config import RecallSettings
from memoryd.domain.conversation import SessionPosition, position_of
from memoryd.domain.errors import InvalidArgument
from memoryd.domain.models import MemoryFilter, SecurityLevel
from memoryd.domain.requests import MemoryDraft, RecallQuery

from .conftest import DIM, MakeRig, Rig, scope_for, unit

S = scope_for()
# Reciprocal rank fusion; expansion off unless a request asks for it; neighbour
# support (service/memories/support.py, tested on its own) off: the relevances here
# are the expansion's alone.
OFF = RecallSettings(default_preset="relevance", fusion="rrf", neighbour_weight=0)
START = datetime(2025, 3, 1, 12, tzinfo=UTC)
# Two sessions interleaved in one namespace: by created_at, a turn's neighbours are
# the other session's; by sequence, its own.
A = ["A: any plans?", "A: the Lisbon marathon", "A: did you finish?", "A: yes, 4h10", "A: wow"]
B = ["B: hello", "B: new job?", "B: yes, at the bakery", "B: since when?", "B: May"]


def axis(i: int) -> np.ndarray:  # type: ignore[type-arg]
    return unit(np.eye(DIM)[i])


async def seed(
    rig: Rig, *, hidden: int | None = None, agent_b_too: bool = False
) -> dict[str, list[str]]:
    """Sessions "a" and "b" (turn seq i of a on axis i, of b on axis 10 + i), their
    turns alternating a minute apart; turn ``hidden`` of "a" RESTRICTED."""
    ids: dict[str, list[str]] = {"a": [], "b": []}
    for i in range(5):
        for j, (session, texts) in enumerate((("a", A), ("b", B))):
            draft = MemoryDraft(
                texts[i],
                namespace="chat",
                created_at=START + timedelta(minutes=2 * i + j),
                embedding=axis(10 * j + i),
                session_id=session,
                sequence=i + 1,
                security_level=SecurityLevel.RESTRICTED if (j, i) == (0, hidden) else None,
            )
            ids[session].append((await rig.service.remember(S, draft, dedup=False)).memory.id)
    if agent_b_too:  # the same session id and namespace, another agent
        other = scope_for(agent="a2")
        for i, text in enumerate(A):
            draft = MemoryDraft(
                f"a2 {text}", namespace="chat", embedding=axis(i), session_id="a", sequence=i + 1
            )
            await rig.service.remember(other, draft, dedup=False)
    return ids


def ask(query_axis: int, **fields: object) -> RecallQuery:
    return RecallQuery(query="the Lisbon marathon", embedding=axis(query_axis), **fields)  # type: ignore[arg-type]


async def test_the_session_position_is_kept_in_metadata_under_the_sessions_keys(
    rig: Rig,
) -> None:
    draft = MemoryDraft("x", metadata={"k": 1}, session_id="chat-7", sequence=3)
    memory = (await rig.service.remember(S, draft)).memory
    assert memory.metadata == {"k": 1, "session_id": "chat-7", "seq": 3}
    assert position_of(memory.metadata) == SessionPosition("chat-7", 3)
    # What a session records (service/sessions) reads the same; a Struct's 3.0 too.
    assert position_of({"session_id": "s", "seq": 3.0}) == SessionPosition("s", 3)
    assert position_of({"session_id": "s"}) is None
    assert position_of({"session_id": "s", "seq": True}) is None


async def test_neighbours_come_from_the_hits_own_session_by_sequence(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=OFF)
    ids = await seed(rig)
    out = await rig.service.recall(S, ask(1, limit=10, context_window=1))
    got = [r.memory.id for r in out.results]
    # Seq 2 of "a" matches; seq 1 and 3 of "a" follow it, though "b"'s turns were
    # written between them.
    assert got[0] == ids["a"][1] and set(got[1:3]) == {ids["a"][0], ids["a"][2]}
    best = out.results[0].components.relevance
    for r in out.results[1:3]:
        assert r.components.relevance == pytest.approx(best * OFF.context_discount)
    wider = await rig.service.recall(S, ask(1, limit=10, context_window=2))
    by_id = {r.memory.id: r.components.relevance for r in wider.results}
    assert by_id[ids["a"][3]] == pytest.approx(best * OFF.context_discount**2)  # two steps away
    assert ids["a"][4] not in by_id or by_id[ids["a"][4]] < best * OFF.context_discount**2


async def test_the_requests_window_overrides_the_servers_default(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=OFF)
    await seed(rig)
    plain = await rig.service.recall(S, ask(1, limit=3))
    assert all(r.components.fused > 0 for r in plain.results)  # only what was found
    on = await make_rig(recall=OFF.model_copy(update={"context_neighbours": 1}))
    ids_on = await seed(on)
    default = await on.service.recall(S, ask(1, limit=3))
    assert {r.memory.id for r in default.results} == set(ids_on["a"][:3])
    off = await on.service.recall(S, ask(1, limit=3, context_window=0))
    assert all(r.components.fused > 0 for r in off.results)


async def test_neighbours_count_against_the_limit(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=OFF)
    await seed(rig)
    for limit in (1, 2, 3):
        out = await rig.service.recall(S, ask(1, limit=limit, context_window=2))
        assert len(out.results) == limit


async def test_a_neighbour_above_the_callers_clearance_or_ceiling_never_appears(
    make_rig: MakeRig,
) -> None:
    rig = await make_rig(recall=OFF)
    ids = await seed(rig, hidden=2)
    low = scope_for(clearance=SecurityLevel.INTERNAL)
    for scope, query in (
        (low, ask(1, limit=10, context_window=2)),
        (
            S,
            ask(
                1,
                limit=10,
                context_window=2,
                filter=MemoryFilter(max_security_level=SecurityLevel.INTERNAL),
            ),
        ),
    ):
        got = [r.memory.id for r in (await rig.service.recall(scope, query)).results]
        assert got[0] == ids["a"][1] and ids["a"][0] in got and ids["a"][3] in got
        assert ids["a"][2] not in got
    # The caller cleared for it gets it as a neighbour.
    full = await rig.service.recall(S, ask(1, limit=10, context_window=1))
    assert ids["a"][2] in [r.memory.id for r in full.results]


async def test_another_agents_turns_of_the_same_session_never_appear(make_rig: MakeRig) -> None:
    rig = await make_rig(recall=OFF)
    await seed(rig, agent_b_too=True)
    out = await rig.service.recall(S, ask(1, limit=10, context_window=5))
    assert out.results and all(r.memory.agent_id == "a1" for r in out.results)
    assert not any(r.memory.content.startswith("a2 ") for r in out.results)


@pytest.mark.parametrize("window", [-1, 6])
async def test_a_bad_context_window_is_rejected_naming_it(rig: Rig, window: int) -> None:
    with pytest.raises(InvalidArgument) as exc:
        await rig.service.recall(S, ask(1, context_window=window))
    assert [v.field for v in exc.value.violations] == ["context_window"]


@pytest.mark.parametrize(
    ("draft", "field"),
    [
        (MemoryDraft("x", sequence=-1, session_id="s"), "sequence"),
        (MemoryDraft("x", sequence=2), "sequence"),
        (MemoryDraft("x", session_id="a\x00b"), "session_id"),
        (MemoryDraft("x", session_id="s" * 300), "session_id"),
        (MemoryDraft("x", session_id="s", metadata={"session_id": "t"}), "session_id"),
        (MemoryDraft("x", session_id="s", sequence=2, metadata={"seq": 3}), "sequence"),
    ],
)
async def test_a_bad_session_position_is_rejected_naming_it_and_stores_nothing(
    rig: Rig, draft: MemoryDraft, field: str
) -> None:
    with pytest.raises(InvalidArgument) as exc:
        await rig.service.remember_batch(S, [MemoryDraft("fine"), draft])
    assert [v.field for v in exc.value.violations] == [f"items[1].{field}"]
    assert await rig.store.count(S.partition, MemoryFilter()) == 0
