"""Three memoryd replicas over one real Qdrant server, eight clients each, writing five
keys (SetMemory with and without if_version), one working-memory scope (merges) and
one session (appends) through replicas chosen at random: the stored histories agree
with every answer a client got (see replica_history.py). With the replicas' shared
mode off (each one's own locks and version counter, as before issue 25) the same
load breaks them: the check can fail.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator

import grpc
import pytest

from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import Daemon, daemon_store_env
from tests.reliability import replica_history

REPLICAS, CLIENTS_PER_REPLICA, OPS_PER_CLIENT = 3, 8, 30


def _replicas(
    daemon_factory: Callable[..., Daemon], env: dict[str, str | None]
) -> Iterator[list[mgrpc.MemoryServiceStub]]:
    common = {
        "MEMORYD_EMBEDDER": "hashing",
        "MEMORYD_MAINTENANCE__ENABLED": "false",
        "MEMORYD_PAGE_TOKEN_SECRET": "h" * 32,
        **env,
    }
    daemons = [daemon_factory(env=common) for _ in range(REPLICAS)]
    for d in daemons:
        d.start()
    channels = [grpc.insecure_channel(d.address) for d in daemons]
    try:
        yield [mgrpc.MemoryServiceStub(c) for c in channels]
    finally:
        for c in channels:
            c.close()
        for d in daemons:
            assert d.stop() == 0


@pytest.mark.slow
def test_replicas_keep_every_guarantee_of_one_process(
    daemon_factory: Callable[..., Daemon], request: pytest.FixtureRequest
) -> None:
    with daemon_store_env("qdrant-server", request, shared="true") as env:
        for stubs in _replicas(daemon_factory, env):
            ledger = replica_history.run(stubs, REPLICAS * CLIENTS_PER_REPLICA, OPS_PER_CLIENT)
            findings = replica_history.check(stubs[0], ledger)
    print(
        f"\nhistory check: {findings.acknowledged_versions} SetMemory acknowledged, "
        f"{len(ledger.merges)} merges, {len(ledger.appended)} messages; refused "
        f"{dict(ledger.refused)}"
    )
    assert ledger.unexpected == []
    assert findings.violations == {}
    assert findings.acknowledged_versions > 100 and ledger.merges and ledger.appended


@pytest.mark.slow
def test_the_check_fails_when_each_replica_trusts_its_own_locks(
    daemon_factory: Callable[..., Daemon], request: pytest.FixtureRequest
) -> None:
    """Shared mode off: per-process locks and counters, as every replica had before.
    The check must find what the issue measured (duplicate versions, lost updates)."""
    with daemon_store_env("qdrant-server", request, shared="false") as env:
        for stubs in _replicas(daemon_factory, env):
            ledger = replica_history.run(stubs, REPLICAS * CLIENTS_PER_REPLICA, OPS_PER_CLIENT)
            findings = replica_history.check(stubs[0], ledger)
    print(f"\nwithout shared mode: {findings.violations}")
    assert findings.duplicate_versions
