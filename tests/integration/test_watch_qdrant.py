"""Watch on the real Qdrant server (docs/watch.md, "Shared mode"): a daemon that owns
its collections (storage.qdrant.shared false) has the write-ahead log and so the
feed, resumable after a SIGKILL restart; replicas sharing the collections have no
local log (a write is acknowledged once Qdrant applied it) and answer Watch
UNIMPLEMENTED saying so, while their writes go on."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import grpc
import pytest

from tests.qdrant_server import QdrantServer
from tests.security.support import api_key_config, write_config

from ..conftest import Daemon, drop_collections, qdrant_daemon_env
from .test_watch import A_ADMIN, A_LOW, B_ADMIN, changes, fresh_agent, head, remember, watch


def _daemon(root: Path, name: str, server: QdrantServer, shared: str) -> Daemon:
    config = write_config(
        root / f"{name}.yaml",
        api_key_config([A_ADMIN, A_LOW, B_ADMIN], maintenance={"enabled": False}),
    )
    prefix = f"w{os.getpid()}_{name}_"
    env = qdrant_daemon_env(server, prefix, shared=shared)
    return Daemon(data_dir=root / name, env=env, config_file=config)


@pytest.fixture(scope="module")
def daemons(
    tmp_path_factory: pytest.TempPathFactory, qdrant_server: QdrantServer
) -> Iterator[tuple[Daemon, Daemon]]:
    root = tmp_path_factory.mktemp("watch-qdrant")
    owner = _daemon(root, "owner", qdrant_server, "false")
    replica = _daemon(root, "replica", qdrant_server, "true")
    try:
        owner.start()
        replica.start()
        yield owner, replica
    finally:
        owner.kill()
        replica.kill()
        for name in ("owner", "replica"):
            drop_collections(qdrant_server, f"w{os.getpid()}_{name}_")


def test_a_daemon_owning_its_collections_has_the_feed_across_a_crash(
    daemons: tuple[Daemon, Daemon],
) -> None:
    owner, _ = daemons
    agent = fresh_agent()
    cursor = head(owner, A_ADMIN, agent)
    other_tenant = head(owner, B_ADMIN, agent)
    made = [remember(owner, agent, f"on qdrant {i}") for i in range(3)]
    owner.kill()  # SIGKILL
    owner.start()
    made.append(remember(owner, agent, "on qdrant after the crash"))
    assert changes(watch(owner, A_ADMIN, agent, cursor=cursor)) == [
        ("CHANGE_KIND_MEMORY_CREATED", i) for i in made
    ]
    assert changes(watch(owner, B_ADMIN, agent, cursor=other_tenant)) == []


def test_shared_replicas_say_the_feed_is_not_offered(daemons: tuple[Daemon, Daemon]) -> None:
    _, replica = daemons
    agent = fresh_agent()
    with pytest.raises(grpc.RpcError) as err:
        watch(replica, A_ADMIN, agent)
    assert err.value.code() == grpc.StatusCode.UNIMPLEMENTED
    assert "shared store" in (err.value.details() or "")
    assert remember(replica, agent, "writes go on without a feed")
