"""Hybrid recall and remember-time deduplication over real gRPC (LanceDB, local model)."""

from __future__ import annotations

import uuid

from memoryd.model_catalog import MINILM_ID
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import Daemon, default_model_id


def fresh_agent() -> str:
    return f"agent-{uuid.uuid4().hex[:10]}"


def listed(stub: MemoryServiceStub, agent: str) -> list[pb.Memory]:
    return list(stub.ListMemories(mpb.ListMemoriesRequest(agent_id=agent, page_size=500)).memories)


def test_remember_updates_an_exact_duplicate(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    first = memory_stub.Remember(
        mpb.RememberRequest(agent_id=agent, content="Prefers window seats", tags=["travel"])
    )
    again = memory_stub.Remember(
        mpb.RememberRequest(
            agent_id=agent, content="  prefers WINDOW seats", tags=["seats"], importance=0.9
        )
    )
    assert not first.deduplicated and again.deduplicated
    m = again.memory
    assert m.id == first.memory.id and m.version == 2
    assert list(m.tags) == ["travel", "seats"] and m.importance == 0.9
    assert m.content == "  prefers WINDOW seats"
    assert m.metadata["memoryd:dedup"]["previous_content"] == "Prefers window seats"
    assert [x.id for x in listed(memory_stub, agent)] == [m.id]
    got = memory_stub.GetMemory(mpb.GetMemoryRequest(agent_id=agent, id=m.id)).memory
    assert got.version == 2 and got.content == m.content


def test_batch_duplicates_collapse_and_namespaces_stay_apart(
    memory_stub: MemoryServiceStub,
) -> None:
    agent = fresh_agent()
    items = [
        mpb.RememberRequest(content="Lives in Lisbon", namespace="u1"),
        mpb.RememberRequest(content="lives in lisbon", namespace="u1", tags=["home"]),
        mpb.RememberRequest(content="Lives in Lisbon", namespace="u2"),
        mpb.RememberRequest(content="Works at a bakery", namespace="u1"),
    ]
    out = memory_stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent, items=items))
    assert [r.deduplicated for r in out.results] == [False, True, False, False]
    ids = [r.memory.id for r in out.results]
    assert ids[0] == ids[1] and len(set(ids)) == 3
    assert out.results[0].memory.version == 2 and list(out.results[0].memory.tags) == ["home"]
    assert len(listed(memory_stub, agent)) == 3


def test_near_duplicate_by_the_local_model(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    first = memory_stub.Remember(
        mpb.RememberRequest(agent_id=agent, content="The user's favourite colour is blue.")
    )
    near = memory_stub.Remember(
        mpb.RememberRequest(agent_id=agent, content="The user's favorite color is blue.")
    )
    other = memory_stub.Remember(
        mpb.RememberRequest(agent_id=agent, content="The user is allergic to peanuts.")
    )
    assert near.deduplicated and near.memory.id == first.memory.id
    assert not other.deduplicated
    assert len(listed(memory_stub, agent)) == 2


#: Semantically close to the question, sharing none of its words.
SHIPMENTS = [
    "Parcel KR-9210 is waiting at customs in Hamburg",
    "Package 3302 was delivered to the Paris warehouse",
    "Freight container MX-7781 is delayed by the port strike",
    "The delivery TR-1150 left the Madrid depot this morning",
    "The courier lost track of parcel QP-6603",
]
TARGET = "Order XJ-4471: replace the left door hinge"


def recall_code(stub: MemoryServiceStub, hybrid: bool) -> mpb.RecallResponse:
    """Remember the shipments and the target for a fresh agent, recall the target's code."""
    agent = fresh_agent()
    items = [mpb.RememberRequest(content=t) for t in [*SHIPMENTS, TARGET]]
    stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent, items=items))
    ask = dict(agent_id=agent, query="Where is shipment XJ-4471 now?", limit=3)
    return stub.Recall(mpb.RecallRequest(**ask, hybrid=hybrid))  # type: ignore[arg-type]


def assert_hybrid_ranks_the_code_first(hybrid: mpb.RecallResponse, model_id: str) -> None:
    assert hybrid.results[0].memory.content == TARGET
    c = hybrid.results[0].components
    assert c.keyword > 0 and c.fused > 0 and -1 <= c.similarity <= 1
    assert 0 < hybrid.results[0].score <= 1
    assert hybrid.embedding_model == model_id


def test_hybrid_finds_an_exact_code_that_vector_search_misses(
    daemon_factory: type[Daemon],
) -> None:
    """MiniLM's vectors miss the code (e5's rank it too: the test below); the keyword
    side of the hybrid search finds it."""
    d = daemon_factory(env={"MEMORYD_EMBEDDER": "minilm"})
    d.start()
    with d.channel() as channel:
        stub = MemoryServiceStub(channel)
        vector = recall_code(stub, hybrid=False)
        assert vector.embedding_model == MINILM_ID
        assert TARGET not in [r.memory.content for r in vector.results]
        assert_hybrid_ranks_the_code_first(recall_code(stub, hybrid=True), MINILM_ID)


def test_hybrid_ranks_an_exact_code_first_with_the_default_model(
    memory_stub: MemoryServiceStub,
) -> None:
    assert_hybrid_ranks_the_code_first(recall_code(memory_stub, hybrid=True), default_model_id())


def test_hybrid_applies_filters_and_reads_chinese(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    items = [
        mpb.RememberRequest(content="金融科技精英论坛的地点是北京。", namespace="zh"),
        mpb.RememberRequest(content="银行柜员招聘会的主要内容是招聘会。", namespace="zh"),
        mpb.RememberRequest(content="金融科技精英论坛 notes", namespace="other"),
        mpb.RememberRequest(
            content="金融科技精英论坛 secret",
            namespace="zh",
            security_level=pb.SECURITY_LEVEL_RESTRICTED,
        ),
    ]
    memory_stub.RememberBatch(mpb.RememberBatchRequest(agent_id=agent, items=items))
    out = memory_stub.Recall(
        mpb.RecallRequest(
            agent_id=agent,
            query="金融科技精英论坛在哪里",
            namespace="zh",
            max_security_level=pb.SECURITY_LEVEL_CONFIDENTIAL,
            hybrid=True,
            limit=5,
        )
    )
    contents = [r.memory.content for r in out.results]
    assert contents[0] == "金融科技精英论坛的地点是北京。"
    assert "金融科技精英论坛 notes" not in contents and "金融科技精英论坛 secret" not in contents


def test_hybrid_with_only_an_embedding_is_vector_only(memory_stub: MemoryServiceStub) -> None:
    agent = fresh_agent()
    memory_stub.Remember(mpb.RememberRequest(agent_id=agent, content="anything at all"))
    out = memory_stub.Recall(
        mpb.RecallRequest(agent_id=agent, query_embedding=[0.1] * 384, hybrid=True)
    )
    assert len(out.results) == 1
    assert out.results[0].components.fused == 0 and out.results[0].components.keyword == 0
