"""Remember-time contradictions: the newest memory about a subject wins, in English
(the local model) and Chinese, by rules or by an LLM on loopback; relations are kept
on both memories and the superseded one can be restored."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import AsyncExitStack
from typing import Any

import pytest

from memoryd.config import (
    ContradictionSettings,
    DedupSettings,
    LimitsSettings,
    MaintenanceSettings,
    RecallSettings,
)
from memoryd.domain.lifecycle import MemorySelector
from memoryd.domain.models import Memory, MemoryFilter, SecurityLevel
from memoryd.domain.relations import RelationKind, relations_of, superseded_by
from memoryd.domain.requests import MemoryDraft, RecallQuery
from memoryd.embedding import HashingEmbedder
from memoryd.embedding.base import Embedder
from memoryd.embedding.local import LocalMiniLMEmbedder
from memoryd.resilience.degradation import collecting
from memoryd.service.common.llm import ChatClient
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.service.common.write_batcher import WriteBatcher
from memoryd.service.lifecycle.bulk import LifecycleDeps
from memoryd.service.lifecycle.importer import ImportLimits
from memoryd.service.lifecycle.service import LifecycleService
from memoryd.service.memories.access_stats import AccessStatsBuffer
from memoryd.service.memories.contradiction import ContradictionResolver
from memoryd.service.memories.service import MemoryService
from memoryd.storage.base import ListPage
from memoryd.storage.memory import InMemoryStore
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.unit.agent_state.chat_server import ChatServer, running_chat_server

from .conftest import scope_for

S = scope_for()
Make = Callable[..., Any]


@pytest.fixture(scope="module")
def minilm() -> Iterator[LocalMiniLMEmbedder]:
    embedder = LocalMiniLMEmbedder(threads=1)
    yield embedder


@pytest.fixture
def chat() -> Iterator[ChatServer]:
    with running_chat_server() as server:
        yield server


class Rig:
    def __init__(
        self, service: MemoryService, store: InMemoryStore, writer: WriteBatcher, embedder: Embedder
    ) -> None:
        self.service = service
        self.store = store
        self.writer = writer
        self.embedder = embedder

    def lifecycle(self, tmp: Any) -> LifecycleService:
        deps = LifecycleDeps(
            store=self.store,
            records=InMemoryRecordStore(),
            writer=self.writer,
            embedder=self.embedder,
            settings=MaintenanceSettings(),
            limits=LimitsSettings(),
            dedup=DedupSettings(),
            history_dir=tmp,
        )
        return LifecycleService(deps, ImportLimits(*([None] * 5)))  # type: ignore[arg-type]

    async def say(self, *texts: str, **draft: Any) -> list[Memory]:
        out = []
        for text in texts:
            out.append((await self.service.remember(S, MemoryDraft(text, **draft))).memory)
        return out

    async def all(self) -> dict[str, Memory]:
        found = await self.store.list(
            S.partition, MemoryFilter(include_archived=True), ListPage(limit=100)
        )
        return {m.content: m for m in found}

    async def live(self) -> set[str]:
        return {c for c, m in (await self.all()).items() if not m.archived}


@pytest.fixture
async def make() -> AsyncIterator[Make]:
    async with AsyncExitStack() as stack:

        async def build(embedder: Embedder, llm_url: str | None = None, **settings: Any) -> Rig:
            store = InMemoryStore(dimension=embedder.dimension)
            await store.open()
            stack.push_async_callback(store.close)
            writer = WriteBatcher(store, max_batch=100)
            writer.start()
            stack.push_async_callback(writer.close)
            access = AccessStatsBuffer(store, interval_s=3600, max_pending=100)
            access.start()
            stack.push_async_callback(access.close)
            llm = None
            if llm_url is not None:
                llm = ChatClient(url=llm_url, model="m", timeout_s=2.0)
                stack.push_async_callback(llm.close)
            resolver = ContradictionResolver(
                store, embedder, ContradictionSettings(**settings), llm
            )
            service = MemoryService(
                store=store,
                embedder=embedder,
                writer=writer,
                access=access,
                page_tokens=PageTokenCodec(b"c" * 32),
                limits=LimitsSettings(),
                recall=RecallSettings(),
                contradictions=resolver,
            )
            return Rig(service, store, writer, embedder)

        yield build


#: "No longer likes blue, use green instead" (the comma is the full-width one).
GREEN_ZH = "用户不再喜欢蓝色\uff0c改用绿色"
DARK_BLUE = "The user prefers dark blue for slides"
RED = "The user prefers red for slides"
GREEN = "The user no longer likes blue for slides; use green instead"


@pytest.mark.parametrize("qualified", [True, False], ids=["for-slides", "bare"])
async def test_the_newest_preference_wins(
    make: Make, minilm: LocalMiniLMEmbedder, qualified: bool
) -> None:
    texts = [DARK_BLUE, RED, GREEN]
    if not qualified:
        texts = [t.replace(" for slides", "") for t in texts]
    rig = await make(minilm)
    blue, red, green = await rig.say(*texts)
    stored = await rig.all()
    assert stored[texts[0]].archived and superseded_by(stored[texts[0]].metadata) == red.id
    assert stored[texts[1]].archived and superseded_by(stored[texts[1]].metadata) == green.id
    assert await rig.live() == {texts[2]}
    assert red.supersedes == blue.id and green.supersedes == red.id
    kinds = {(r.kind, r.memory_id) for r in relations_of(stored[texts[1]].metadata)}
    assert kinds == {
        (RelationKind.SUPERSEDES, blue.id),
        (RelationKind.SUPERSEDED_BY, green.id),
    }
    found = await rig.service.recall(S, RecallQuery(query="which colour does the user like?"))
    assert [r.memory.content for r in found.results] == [texts[2]]


async def test_unrelated_statements_are_all_kept(make: Make, minilm: LocalMiniLMEmbedder) -> None:
    rig = await make(minilm)
    texts = [
        "The user prefers tea",
        "The user prefers red",  # another kind of value: tea stays
        "I am allergic to peanuts",
        "I am allergic to shellfish",  # allergies add up
        "My sister lives in Rome",
        "I live in Paris",  # another subject
        "I like hiking",
        "I like cooking",  # likes add up
        "The meeting is on Monday",
    ]
    await rig.say(*texts)
    assert await rig.live() == set(texts)


async def test_a_changed_fact_supersedes(make: Make, minilm: LocalMiniLMEmbedder) -> None:
    rig = await make(minilm)
    await rig.say("I live in Paris", "My name is Alice", "I am 34 years old")
    await rig.say("I moved to Berlin", "My name is Alicia", "I am 35 years old")
    assert await rig.live() == {"I moved to Berlin", "My name is Alicia", "I am 35 years old"}


async def test_chinese_preferences(make: Make) -> None:
    # The hashing embedder is lexical: every memory of this small partition is a candidate.
    rig = await make(HashingEmbedder(256), min_similarity=0.0)
    await rig.say("用户偏好深蓝色", "用户偏好喝茶", "我住在北京")
    await rig.say("用户偏好红色")
    assert await rig.live() == {"用户偏好红色", "用户偏好喝茶", "我住在北京"}
    await rig.say(GREEN_ZH, "我搬到上海了")
    assert await rig.live() == {GREEN_ZH, "用户偏好喝茶", "我搬到上海了"}
    stored = await rig.all()
    assert superseded_by(stored["用户偏好红色"].metadata) == stored[GREEN_ZH].id


async def test_items_of_one_batch_are_judged_in_order(
    make: Make, minilm: LocalMiniLMEmbedder
) -> None:
    rig = await make(minilm)
    out = await rig.service.remember_batch(S, [MemoryDraft(t) for t in (DARK_BLUE, RED, GREEN)])
    assert [o.memory.archived for o in out] == [True, True, False]
    assert await rig.live() == {GREEN}


async def test_supports_and_refines_are_recorded_without_archiving(
    make: Make, minilm: LocalMiniLMEmbedder
) -> None:
    rig = await make(minilm)
    (blue,) = await rig.say("I prefer blue for the dashboard")
    (same,) = await rig.say("The user prefers blue for the dashboard")
    (detail,) = await rig.say("The user prefers navy blue for the dashboard")
    assert await rig.live() == {blue.content, same.content, detail.content}
    assert (RelationKind.SUPPORTS, blue.id) in {
        (r.kind, r.memory_id) for r in relations_of(same.metadata)
    }
    assert any(r.kind is RelationKind.REFINES for r in relations_of(detail.metadata))
    stored = (await rig.all())[blue.content]
    assert {r.kind for r in relations_of(stored.metadata)} >= {
        RelationKind.SUPPORTED_BY,
        RelationKind.REFINED_BY,
    }
    assert stored.updated_at == blue.updated_at  # a relation is not an update


async def test_restore_brings_a_superseded_memory_back(
    make: Make, minilm: LocalMiniLMEmbedder, tmp_path: Any
) -> None:
    rig = await make(minilm)
    old, _ = await rig.say(DARK_BLUE, RED)
    lifecycle = rig.lifecycle(tmp_path)
    assert await lifecycle.restore(S, MemorySelector(ids=(old.id,))) == 1
    back = (await rig.all())[DARK_BLUE]
    assert not back.archived and superseded_by(back.metadata) == ""
    assert any(r.kind is RelationKind.SUPERSEDED_BY for r in relations_of(back.metadata))


async def test_keyed_pinned_and_other_levels_are_left_alone(
    make: Make, minilm: LocalMiniLMEmbedder
) -> None:
    rig = await make(minilm)
    await rig.say("The user prefers dark blue for slides", tags=("pinned",))
    await rig.say("The user prefers grey for slides", security_level=SecurityLevel.CONFIDENTIAL)
    await rig.say("The user prefers red for slides")
    live = await rig.live()
    assert "The user prefers dark blue for slides" in live  # pinned
    assert "The user prefers grey for slides" in live  # another security level


async def test_off_keeps_everything(make: Make, minilm: LocalMiniLMEmbedder) -> None:
    rig = await make(minilm, mode="off")
    await rig.say(DARK_BLUE, RED, GREEN)
    assert await rig.live() == {DARK_BLUE, RED, GREEN}


async def test_an_llm_judges_when_configured(make: Make, chat: ChatServer) -> None:
    def reply(request: dict[str, Any]) -> str:
        user = request["messages"][1]["content"]
        if "EXISTING:" in user and "cats" in user.split("EXISTING:")[0]:
            return json.dumps([{"ref": "m1", "relation": "supersedes"}])
        return "[]"

    chat.reply = reply
    rig = await make(HashingEmbedder(64), llm_url=chat.url, min_similarity=0.0)
    await rig.say("The user has a dog named Rex")
    with collecting() as degraded:
        await rig.say("The user now has cats instead")
    assert degraded == []
    assert await rig.live() == {"The user now has cats instead"}
    prompt = chat.requests[-1]["messages"][1]["content"]
    assert "NEW: The user now has cats instead" in prompt and "m1: The user has a dog" in prompt


async def test_a_failing_llm_falls_back_to_the_rules_and_says_so(
    make: Make, chat: ChatServer, minilm: LocalMiniLMEmbedder
) -> None:
    chat.mode = "error"
    rig = await make(minilm, llm_url=chat.url)
    await rig.say(DARK_BLUE)
    with collecting() as degraded:
        await rig.say(RED)
    assert await rig.live() == {RED}
    (note,) = degraded
    assert note.component == "llm" and "HTTP 500" in note.reason and "rules" in note.reason


async def test_a_changed_value_of_one_subject_supersedes(
    make: Make, minilm: LocalMiniLMEmbedder
) -> None:
    """Seed 001 §2.2 ("冲突的记忆 → 保留最新"), without an LLM: a later value of the same
    subject's slot (a weekday, time, date, number, place or name) wins."""
    rig = await make(minilm)
    olds = [
        "The deadline is Friday",
        "The standup is at 9:30 am",
        "The launch date is March 3",
        "The budget is 5000 dollars",
        "The offsite location is Berlin",
        "The team lead is Alice",
    ]
    news = [
        "The deadline moved to Monday",
        "The standup was moved to 10:15 am",
        "The launch date was pushed back to March 10",
        "The budget was changed to 7000 dollars",
        "The offsite location changed to Munich",
        "The team lead is now Bob",
    ]
    await rig.say(*olds)
    await rig.say(*news)
    assert await rig.live() == set(news)
    stored = await rig.all()
    for old, new in zip(olds, news, strict=True):
        assert superseded_by(stored[old].metadata) == stored[new].id
    found = await rig.service.recall(S, RecallQuery(query="when is the deadline?"))
    assert found.results[0].memory.content == "The deadline moved to Monday"
    assert "The deadline is Friday" not in {r.memory.content for r in found.results}


async def test_values_of_different_subjects_all_stay(
    make: Make, minilm: LocalMiniLMEmbedder
) -> None:
    rig = await make(minilm)
    texts = [
        "Project Alpha's deadline is Friday",
        "Project Beta's deadline is Monday",  # another project's deadline
        "The meeting is on Monday",
        "The meeting is at 3pm",  # another kind of value: a day and a time
        "It is Friday",
        "It is Monday",  # no subject
        "The plan is to meet Alice on Friday and then fly to Rome for the conference",
        "The plan is to meet Bob on Monday and then fly to Oslo for the workshop",  # clauses
    ]
    await rig.say(*texts)
    assert await rig.live() == set(texts)


async def test_chinese_changed_values(make: Make) -> None:
    # Every memory of the partition is a candidate (min_similarity 0): the rules alone
    # decide, which is where a false positive would show.
    rig = await make(HashingEmbedder(256), min_similarity=0.0)
    await rig.say("截止日期是周五", "会议时间是下午3点", "会议地点是北京", "A项目的截止日期是周五")
    await rig.say(
        "截止日期改到周一了", "会议时间改成下午4点", "会议地点改到上海", "B项目的截止日期是周一"
    )
    assert await rig.live() == {
        "截止日期改到周一了",
        "会议时间改成下午4点",
        "会议地点改到上海",
        "A项目的截止日期是周五",
        "B项目的截止日期是周一",
    }
    stored = await rig.all()
    assert superseded_by(stored["截止日期是周五"].metadata) == stored["截止日期改到周一了"].id


async def test_a_relation_has_a_strength(make: Make, minilm: LocalMiniLMEmbedder) -> None:
    """Seed 001 §3.1 memory_relations.strength: the cosine of the two memories where a
    rule judged them (the same on both sides), 0.5 where nothing measured it."""
    rig = await make(minilm)
    old, new = await rig.say("The deadline is Friday", "The deadline moved to Monday")
    stored = await rig.all()
    vectors = await minilm.embed([old.content, new.content])
    cosine = float(vectors[0] @ vectors[1])
    (forward,) = relations_of(stored[new.content].metadata)
    (backward,) = relations_of(stored[old.content].metadata)
    assert forward.kind is RelationKind.SUPERSEDES and backward.kind is RelationKind.SUPERSEDED_BY
    assert forward.strength == pytest.approx(cosine, abs=1e-3) == backward.strength
    assert 0 < forward.strength < 1
    legacy = {"memoryd:relations": [{"kind": "supports", "memory_id": "m"}]}
    assert relations_of(legacy)[0].strength == 0.5
    odd = {"memoryd:relations": [{"kind": "supports", "memory_id": "m", "strength": 7}]}
    assert relations_of(odd)[0].strength == 0.5
