"""Long-term memory that keeps facts, end to end on a real daemon (LanceDB, the local
model, no LLM) through the Python client and raw gRPC: a contradicting preference
supersedes the old one (English and Chinese) and recall returns the current one; a
consolidated group keeps every statement and can be restored; relations, ordering
by use and importance, recency from the last access, negative weights rejected."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import grpc
import pytest
from google.protobuf import timestamp_pb2

from memoryd_client import InvalidArgumentError, MemorydClient
from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1.memory_service_pb2_grpc import MemoryServiceStub
from tests.conftest import Daemon

GREEN_ZH = "用户不再喜欢蓝色\uff0c改用绿色"


def agent() -> str:
    return f"ltm-{uuid.uuid4().hex[:10]}"


@pytest.fixture(scope="module")
def multilingual(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """Chinese needs a model that reads it (docs/configuration.md, "Multilingual memory"): with MiniLM
    most Chinese characters are unknown, so distinct sentences look alike."""
    daemon = Daemon(
        data_dir=tmp_path_factory.mktemp("zh") / "data",
        env={"MEMORYD_EMBEDDER": "multilingual", "MEMORYD_EMBEDDING__MULTILINGUAL_THREADS": "1"},
    )
    daemon.start()
    yield daemon
    daemon.kill()


@pytest.mark.parametrize(
    ("language", "statements", "unrelated", "question"),
    [
        (
            "english",
            [
                "The user prefers dark blue for slides",
                "The user prefers red for slides",
                "The user no longer likes blue for slides; use green instead",
            ],
            "The user prefers tea in the morning",
            "Which colour should the slides use?",
        ),
        (
            "chinese",
            ["用户偏好深蓝色", "用户偏好红色", GREEN_ZH],
            "用户偏好喝茶",
            "用户喜欢什么颜色",
        ),
    ],
    ids=["english", "chinese"],
)
def test_a_contradicting_preference_supersedes_the_old_one(
    request: pytest.FixtureRequest,
    language: str,
    statements: list[str],
    unrelated: str,
    question: str,
) -> None:
    daemon = request.getfixturevalue("shared_daemon" if language == "english" else "multilingual")
    a = agent()
    with MemorydClient(daemon.address) as client:
        tea = client.remember(a, unrelated).memory
        first, second, third = (client.remember(a, s).memory for s in statements)
        assert second.supersedes == first.id and third.supersedes == second.id
        old = client.get(a, first.id)
        assert old.archived and old.superseded_by == second.id
        assert ("superseded_by", second.id) in {(r.kind, r.memory_id) for r in old.relations}
        middle = client.get(a, second.id)
        assert middle.archived and middle.superseded_by == third.id
        assert {(r.kind, r.memory_id) for r in middle.relations} >= {
            ("supersedes", first.id),
            ("superseded_by", third.id),
        }
        hits = client.recall(a, question, limit=10)
        ids = [h.memory.id for h in hits]
        assert third.id in ids and first.id not in ids and second.id not in ids
        assert not client.get(a, tea.id).archived
        # History is kept: the archived ones are listed with include_archived.
        listed = {m.id for m in client.list(a, include_archived=True)}
        assert {first.id, second.id, third.id, tea.id} <= listed
        # And a superseded memory can be brought back.
        assert client.restore(a, ids=[first.id]) == 1
        back = client.get(a, first.id)
        assert not back.archived and back.superseded_by == ""


def _ago(days: int) -> timestamp_pb2.Timestamp:
    ts = timestamp_pb2.Timestamp()
    ts.FromDatetime(datetime.now(UTC) - timedelta(days=days))
    return ts


def test_a_consolidated_group_keeps_every_statement_and_can_be_restored(
    shared_daemon: Daemon,
) -> None:
    a = agent()
    notes = [
        "The user's dentist is Dr. Okafor.",
        "The user's dentist appointment is every March.",
        "The user is allergic to penicillin.",
        "The user's blood type is O negative.",
        "The user takes vitamin D in winter.",
    ]
    items = [
        mpb.RememberRequest(content=n, tags=["health"], created_at=_ago(90 - i))
        for i, n in enumerate(notes)
    ]
    with MemorydClient(shared_daemon.address) as client:
        originals = [r.memory.id for r in client.remember_batch(a, items)]
        preview = client.consolidate(a, dry_run=True)
        assert preview.dry_run and preview.groups == 1 and preview.consolidated == 5
        assert all(not client.get(a, i).archived for i in originals)

        done = client.consolidate(a)
        (group,) = done.details
        assert group.method == "merge" and set(group.source_ids) == set(originals)
        derived = client.get(a, group.derived_id)
        assert derived.derived_from == tuple(originals) and "consolidated" in derived.tags
        # Condensed, nothing lost: the two statements about the dentist share their
        # first words and are folded into one.
        assert derived.content.split("\n") == [
            "The user's dentist is Dr. Okafor, appointment is every March.",
            *notes[2:],
        ]
        assert all(client.get(a, i).superseded_by == derived.id for i in originals)
        hits = client.recall(a, "what is the user allergic to?", limit=3)
        assert hits[0].memory.id == derived.id

        undone = client.undo_consolidation(a, [derived.id])
        assert (undone.undone, undone.restored) == (1, 5)
        assert client.get(a, derived.id).archived
        assert all(not client.get(a, i).archived for i in originals)


def test_list_orders_recency_from_access_and_weights(
    shared_daemon: Daemon, memory_stub: MemoryServiceStub
) -> None:
    a = agent()
    with MemorydClient(shared_daemon.address) as client:
        low = client.remember(a, "Parking is on level 3", importance=0.1).memory
        high = client.remember(a, "The server root password rotates monthly", importance=0.9).memory
        for _ in range(3):
            client.get(a, low.id)
        by_importance = client.list(a, order="importance_desc")
        assert [m.id for m in by_importance] == [high.id, low.id]
        with pytest.raises(InvalidArgumentError) as err:
            client.recall(a, "parking", scoring=mpb.Scoring(preset=3, recency_weight=-1))
        assert err.value.field_violations[0].field == "scoring.recency_weight"
    scoring = mpb.Scoring(
        preset=mpb.SCORING_PRESET_WEIGHTED, recency_basis=mpb.RECENCY_BASIS_LAST_ACCESS
    )
    found = memory_stub.Recall(mpb.RecallRequest(agent_id=a, query="parking", scoring=scoring))
    assert found.results[0].memory.id == low.id
    with pytest.raises(grpc.RpcError) as rpc:
        memory_stub.Recall(
            mpb.RecallRequest(
                agent_id=a,
                query="parking",
                scoring=mpb.Scoring(preset=mpb.SCORING_PRESET_WEIGHTED, importance_weight=-0.2),
            )
        )
    assert rpc.value.code() == grpc.StatusCode.INVALID_ARGUMENT
    # Relations come back on the raw Memory too.
    got = memory_stub.GetMemory(mpb.GetMemoryRequest(agent_id=a, id=high.id)).memory
    assert list(got.relations) == [] and got.superseded_by == ""
    assert pb.RELATION_KIND_SUPERSEDES == 1
