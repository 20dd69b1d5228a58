"""One api_key daemon shared by the adversarial, fuzzing and log-scan tests.

The suites run as session fixtures so the log scan (which needs both to have run)
works whichever tests are selected. They run once per store: the embedded LanceDB and
a real Qdrant server (skipped, saying why, where there is none).
"""

from __future__ import annotations

import os
import random
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import grpc
import pytest

from tests.conftest import DAEMON_STORES, Daemon, daemon_store_env
from tests.security import adversary, seeding
from tests.security.fuzzing import FuzzReport, run_fuzz
from tests.security.support import KeySpec, api_key_config, write_config
from tests.security.world import World, make_principals

SEED = int(os.environ.get("MEMORYD_SECURITY_SEED", "20240611"))
#: Attack attempts per RPC (each with a control attempt when it names something).
PER_RPC = int(os.environ.get("MEMORYD_ADVERSARIAL_PER_RPC", "60"))

FUZZER = KeySpec(
    "fuzz-" + "9" * 24, "fuzzer", "t-fuzz", "*", "restricted", ("read", "write", "admin")
)


@dataclass
class SecurityDaemon:
    daemon: Daemon
    world: World
    channel: grpc.Channel


@pytest.fixture(scope="session", params=DAEMON_STORES)
def security_daemon(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SecurityDaemon]:
    with daemon_store_env(request.param, request) as env:
        yield from _security_daemon(tmp_path_factory, env)


def _security_daemon(
    tmp_path_factory: pytest.TempPathFactory, env: dict[str, str | None]
) -> Iterator[SecurityDaemon]:
    rng = random.Random(SEED)
    world = World(principals=make_principals(rng))
    root = tmp_path_factory.mktemp("security")
    config = api_key_config(
        [p.key for p in world.principals] + [FUZZER],
        # Small limits so the fuzzer reaches them; rotation is exercised on the way,
        # and every rotated file is kept: the log test reads the whole run's audit, and
        # pruning at the default 20 files dropped the adversarial suite's denials.
        limits={"max_request_bytes": 1 << 20},
        audit={"rotate_bytes": 256 * 1024, "keep_files": 100_000},
    )
    daemon = Daemon(
        data_dir=root / "data", env=env, config_file=write_config(root / "memoryd.yaml", config)
    )
    daemon.start()
    channel = grpc.insecure_channel(daemon.address)
    try:
        yield SecurityDaemon(daemon, world, channel)
    finally:
        channel.close()
        daemon.kill()


@pytest.fixture(scope="session")
def adversarial_report(security_daemon: SecurityDaemon) -> adversary.Report:
    rng = random.Random(SEED + 1)
    seeder = seeding.Seeder(security_daemon.world, security_daemon.channel, rng)
    seeder.seed()
    seeder.harvest_page_tokens()
    report = adversary.run(security_daemon.world, security_daemon.channel, rng, PER_RPC)
    report.notes += seeder.notes
    print("\n" + report.render())
    return report


@pytest.fixture(scope="session")
def fuzz_report(security_daemon: SecurityDaemon) -> FuzzReport:
    report = run_fuzz(security_daemon.channel, FUZZER)
    print("\n" + report.render())
    return report


@pytest.fixture(scope="session")
def stopped_daemon_files(
    security_daemon: SecurityDaemon, adversarial_report: adversary.Report, fuzz_report: FuzzReport
) -> Path:
    """Stop the daemon cleanly (flushing the audit log) once both suites ran."""
    if security_daemon.daemon.process is not None:
        assert security_daemon.daemon.stop() == 0
    return security_daemon.daemon.data_dir
