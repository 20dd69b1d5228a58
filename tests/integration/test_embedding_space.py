"""A daemon restarted with another embedding model of the same dimension refuses to
start (its old vectors are not comparable) until the change is allowed; then Reembed
brings the old memories into the new model's space. MiniLM and multilingual-e5 are
both 384-dimensional: only the data directory's record tells them apart."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from memoryd_proto.v1 import lifecycle_service_pb2 as lpb
from memoryd_proto.v1 import lifecycle_service_pb2_grpc as lgrpc
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import REPO, Daemon


def test_a_model_change_is_refused_then_allowed_and_reembedded(
    daemon_factory: Callable[..., Daemon], tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    first = daemon_factory(data_dir=data_dir, env={"MEMORYD_EMBEDDER": "local"})
    first.start()
    with first.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        stub.RememberBatch(
            mpb.RememberBatchRequest(
                agent_id="a",
                items=[mpb.RememberRequest(content=f"fact number {i}") for i in range(5)],
            )
        )
    assert first.stop() == 0

    refused = subprocess.run(
        [sys.executable, "-m", "memoryd", "serve", "--data-dir", str(data_dir),
         "--listen", "127.0.0.1:0", "--embedder", "multilingual"],
        capture_output=True, text=True, cwd=REPO, timeout=120,
    )  # fmt: skip
    assert refused.returncode == 1
    assert "all-MiniLM-L6-v2" in refused.stderr and "multilingual-e5" in refused.stderr
    assert "allow_model_change" in refused.stderr

    allowed = daemon_factory(
        data_dir=data_dir,
        env={"MEMORYD_EMBEDDER": "multilingual", "MEMORYD_EMBEDDING__ALLOW_MODEL_CHANGE": "true"},
    )
    allowed.start()
    assert "embedding model changed" in allowed.logs()
    with allowed.channel() as channel:
        life = lgrpc.LifecycleServiceStub(channel)
        *_, last = life.Reembed(lpb.ReembedRequest(agent_id="a"))
        assert last.HasField("result") and last.result.reembedded == 5
        stub = mgrpc.MemoryServiceStub(channel)
        listed = stub.ListMemories(mpb.ListMemoriesRequest(agent_id="a", page_size=10))
        assert {m.embedding_model for m in listed.memories} == {last.result.embedding_model}
        assert last.result.embedding_model.startswith("multilingual-e5")
    assert allowed.stop() == 0

    # The new model is now the recorded one: the old embedder is refused in turn.
    with pytest.raises(RuntimeError, match="were embedded by multilingual-e5"):
        daemon_factory(data_dir=data_dir, env={"MEMORYD_EMBEDDER": "local"}).start()


def test_a_daemon_that_ran_on_hashing_moves_to_a_model_by_itself(
    daemon_factory: Callable[..., Daemon], tmp_path: Path
) -> None:
    """The hashing embedder's memories are the fallback's space, which a daemon behind
    a model keeps apart and re-embeds in the background: no refusal."""
    data_dir = tmp_path / "data"
    first = daemon_factory(data_dir=data_dir, env={"MEMORYD_EMBEDDER": "hashing"})
    first.start()
    with first.channel() as channel:
        mgrpc.MemoryServiceStub(channel).Remember(
            mpb.RememberRequest(agent_id="a", content="the offsite is in Lisbon")
        )
    assert first.stop() == 0
    second = daemon_factory(data_dir=data_dir, env={"MEMORYD_EMBEDDER": "local"})
    second.start()
    assert "re-embedded in the background" in second.logs()
    assert second.stop() == 0


def test_without_a_configured_embedder_a_data_dir_keeps_its_model(
    daemon_factory: Callable[..., Daemon], tmp_path: Path
) -> None:
    """The default moved to e5: a data directory MiniLM embedded keeps serving with
    MiniLM (its memories stay searchable) and the log says how to move."""
    data_dir = tmp_path / "data"
    first = daemon_factory(data_dir=data_dir, env={"MEMORYD_EMBEDDER": "minilm"})
    first.start()
    with first.channel() as channel:
        mgrpc.MemoryServiceStub(channel).Remember(
            mpb.RememberRequest(agent_id="a", content="the offsite is in Lisbon")
        )
    assert first.stop() == 0
    again = daemon_factory(data_dir=data_dir, env={"MEMORYD_EMBEDDER": None})
    again.start()
    logs = again.logs()
    assert "were embedded by all-MiniLM-L6-v2-int8: serving with that model" in logs
    assert "memoryctl reembed --all-agents" in logs and "ALLOW_MODEL_CHANGE=true" in logs
    with again.channel() as channel:
        found = mgrpc.MemoryServiceStub(channel).Recall(
            mpb.RecallRequest(agent_id="a", query="where is the offsite?")
        )
    assert found.embedding_model == "all-MiniLM-L6-v2-int8"
    assert found.results[0].memory.content == "the offsite is in Lisbon"
    assert again.stop() == 0


def test_a_model_not_fetched_stops_the_start_saying_what_to_run(tmp_path: Path) -> None:
    empty = tmp_path / "models"
    refused = subprocess.run(
        [sys.executable, "-m", "memoryd", "serve", "--data-dir", str(tmp_path / "data"),
         "--listen", "127.0.0.1:0", "--embedder", "e5"],
        capture_output=True, text=True, cwd=REPO, timeout=120,
        env={**os.environ, "MEMORYD_EMBEDDING__MODELS_DIR": str(empty)},
    )  # fmt: skip
    assert refused.returncode == 1
    assert f"memoryd models fetch e5-small-v2-int8 --models-dir {empty}" in refused.stderr
    assert "--embedder minilm needs no fetch" in refused.stderr
    assert "Traceback" not in refused.stderr
