"""Shared fixtures: a real memoryd daemon in a subprocess, reached over real gRPC."""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import grpc
import pytest
from hypothesis import settings

from memoryd.embedding.packaged import fetch_command, verify
from memoryd.model_catalog import E5_SMALL_V2, MINILM_ID
from memoryd_proto.v1 import memory_service_pb2_grpc
from tests.qdrant_server import (
    TEST_ENV,
    NoQdrant,
    QdrantServer,
    locate,
    memory_dir,
    start_server,
)

# Property tests run beside daemons on a busy 2-core box: a per-example deadline there
# measures the machine, not the code (speed targets live in `make bench`).
settings.register_profile("memoryd", deadline=None)
settings.load_profile("memoryd")

REPO = Path(__file__).resolve().parent.parent
#: Generous: the first start also loads the ONNX model, and the 2-core machine is shared
#: (starts took over 60 s at a load average of 17). Not a performance assertion.
START_TIMEOUT_S = 120.0


#: Fixtures that start a daemon or a server: none of them in tests/unit (make test-fast).
SERVER_FIXTURES = frozenset(
    {"shared_daemon", "memory_stub", "daemon_factory", "qdrant_server", "mcp_daemon"}
)

#: Where pytest's own fixtures (baseid "") and this file's live: their session fixtures
#: (shared_daemon, qdrant_server, ...) are meant to be built once per xdist worker.
_PER_WORKER_BASEIDS = {"", "tests"}


@functools.cache
def e5_missing() -> str | None:
    """Why the default model (e5-small-v2 int8) cannot be used here, None when it is in
    the models cache and verified (make test fetches it: `make models-for-tests`)."""
    bad = [s for s in verify(E5_SMALL_V2, None) if s.state != "ok"]
    if not bad:
        return None
    return (
        f"the e5 model is not in the models cache ({bad[0].path}: {bad[0].state}); "
        f"Maven Central could not be reached by `{fetch_command(E5_SMALL_V2, None)}`"
    )


def needs_e5() -> None:
    """Skip the calling test, saying why, when the e5 model is not here."""
    reason = e5_missing()
    if reason is not None:
        pytest.skip(reason)


def default_embedder_env() -> dict[str, str]:
    """What Daemon adds to a daemon's environment for its embedder: without the default
    model (no Maven Central here), MiniLM stands in for it."""
    return {"MEMORYD_EMBEDDER": "minilm"} if e5_missing() is not None else {}


def default_model_id() -> str:
    """The embedding model id of a daemon started with the default embedder (its memories'
    embedding_model): e5's, or MiniLM's where e5 is missing."""
    return MINILM_ID if default_embedder_env() else E5_SMALL_V2.model_id


def pytest_report_header(config: pytest.Config) -> str | None:
    reason = e5_missing()
    if reason is None:
        return None
    return f"{reason}: e5 tests skip, daemons started with the default embedder use minilm"


_WIDER = {"session": 0, "package": 1, "module": 2, "class": 3}


def xdist_group(item: pytest.Item) -> str | None:
    """The work unit ``item`` must share with other tests under ``--dist loadgroup``,
    None for any worker. A test using a module- or class-scoped fixture stays with its
    module, one using a session fixture of a sub-suite's conftest (the security suite's
    adversarial and fuzzing runs) with that sub-suite: split across workers, each worker
    would build those (daemons, whole attack runs) again."""
    # _fixtureinfo: pytest has no public way to ask which fixture definitions a test uses.
    defs = [d for ds in item._fixtureinfo.name2fixturedefs.values() for d in ds]  # type: ignore[attr-defined]
    shared = [d for d in defs if d.scope in _WIDER and d.baseid not in _PER_WORKER_BASEIDS]
    if not shared:
        return None
    widest = min(shared, key=lambda d: _WIDER[d.scope])
    if widest.scope in ("session", "package"):
        return str(widest.baseid)
    return item.nodeid.split("::", 1)[0]


def pytest_configure(config: pytest.Config) -> None:
    """The processes the tests start (xdist workers, daemons, memoryctl, the MCP bridge)
    write the bytecode of what they import and reuse it, as `make run` has the daemon do."""
    # With PYTHONDONTWRITEBYTECODE set (as on this project's machines) each of the suite's
    # daemon starts compiled every module it imports again: 6.9 s of CPU a start with the
    # hashing embedder, 3.2 s with the bytecode kept (2026-11-28, load average ~24).
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    _temp_root_in_memory(config)


#: Below this much free tmpfs the suite keeps its temporary directories on disk.
_TMPFS_MIN_FREE_BYTES = 4 << 30


def _temp_root_in_memory(config: pytest.Config) -> None:
    """tmp_path and every directory made from it (daemons' data dirs, LanceDB tables,
    write-ahead logs, Qdrant Edge shards) live on tmpfs (/dev/shm) when the machine has
    one with room, unless a --basetemp or PYTEST_DEBUG_TEMPROOT says otherwise."""
    # Why: much of the suite's wall time was fsync waits, not CPU. Opening a Qdrant Edge
    # store and its records fsyncs ~770 times (3-5 s on this box's shared disk, 0.5 s on
    # tmpfs, measured), and every test's fresh store, log and daemon pays such a cost. A
    # SIGKILL loses nothing the page cache holds, so the crash and recovery suites prove
    # the same on tmpfs; the disk-full tests mount their own small tmpfs anyway.
    if config.option.basetemp or os.environ.get("PYTEST_DEBUG_TEMPROOT"):
        return  # chosen by the caller, or an xdist worker given its controller's
    root = Path("/dev/shm")
    if not (root.is_dir() and os.access(root, os.W_OK)):
        return
    stats = os.statvfs(root)
    if stats.f_bavail * stats.f_frsize < _TMPFS_MIN_FREE_BYTES:
        return
    # pytest's own variable for the root of its numbered temporary directories
    # (<root>/pytest-of-<user>/pytest-<n>, the last three runs kept); read when the
    # first one is made.
    os.environ["PYTEST_DEBUG_TEMPROOT"] = str(root)


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(
    config: pytest.Config, items: list[pytest.Item]
) -> Iterator[None]:
    """Mark the groups before xdist's hook reads the marks into node ids ("id@group"), and
    check afterwards that it did: with pytest 9.2 it silently does not (pytest-xdist
    issue 1386), and every worker would build the module daemons and security runs."""
    unit_with_servers = [
        item.nodeid
        for item in items
        if item.nodeid.startswith("tests/unit/")
        and SERVER_FIXTURES & set(getattr(item, "fixturenames", ()))
    ]
    if unit_with_servers:
        raise pytest.UsageError(
            f"tests/unit starts no daemon or server (make test-fast): {unit_with_servers[0]} "
            "uses one; it belongs in tests/integration"
        )
    groups: dict[pytest.Item, str] = {}
    for item in items:
        group = xdist_group(item)
        if group is not None:
            item.add_marker(pytest.mark.xdist_group(group))
            groups[item] = group
    yield
    if getattr(config.option, "loadgroup", False):
        lost = [
            item.nodeid for item, group in groups.items() if not item.nodeid.endswith(f"@{group}")
        ]
        if lost:
            raise pytest.UsageError(
                f"pytest-xdist did not group {len(lost)} tests under --dist loadgroup (e.g. "
                f"{lost[0]}): a pytest it does not support (pytest-xdist issue 1386)?"
            )


@dataclass
class Daemon:
    """A memoryd process on 127.0.0.1:<ephemeral> (or a Unix socket) with its own data dir."""

    data_dir: Path
    #: Added to the environment; a None value removes the variable.
    env: dict[str, str | None] = field(default_factory=dict)
    listen: str = "127.0.0.1:0"
    process: subprocess.Popen[bytes] | None = None
    address: str = ""
    log_path: Path | None = None
    #: Optional YAML config passed as --config (flags and env still override it).
    config_file: Path | None = None

    def start(self) -> str:
        ready = self.data_dir.parent / f"{self.data_dir.name}.ready"
        ready.unlink(missing_ok=True)
        self.log_path = self.data_dir.parent / f"{self.data_dir.name}.log"
        # Metrics on a free port: daemons of concurrent tests must not fight over 9464.
        # Without the default model (no Maven Central here), MiniLM stands in for it.
        fallback = default_embedder_env()
        env = {
            key: value
            for key, value in {
                **os.environ,
                "MEMORYD_LOGGING__FORMAT": "json",
                "MEMORYD_METRICS__LISTEN": "127.0.0.1:0",
                **fallback,
                **self.env,
            }.items()
            if value is not None
        }
        self.process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "memoryd",
                "serve",
                "--listen",
                self.listen,
                "--data-dir",
                str(self.data_dir),
                "--ready-file",
                str(ready),
                *(["--config", str(self.config_file)] if self.config_file else []),
            ],
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=self.log_path.open("ab"),
            cwd=REPO,
        )
        deadline = time.monotonic() + START_TIMEOUT_S
        while not ready.exists():
            if self.process.poll() is not None:
                raise RuntimeError(f"memoryd exited with {self.process.returncode}:\n{self.logs()}")
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"memoryd did not become ready:\n{self.logs()}")
            time.sleep(0.05)
        self.address = ready.read_text()
        return self.address

    def logs(self) -> str:
        return self.log_path.read_text() if self.log_path and self.log_path.exists() else ""

    def imported(self) -> set[str]:
        """Modules the daemon imported, from its ``-X importtime`` lines on stderr (start
        it with ``PYTHONPROFILEIMPORTTIME=1`` in its env)."""
        return {
            line.rsplit("|", 1)[-1].strip()
            for line in self.logs().splitlines()
            if line.startswith("import time:") and "|" in line
        }

    def stop(self, timeout: float = 30.0) -> int:
        """SIGTERM and wait; returns the exit code."""
        assert self.process is not None
        self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(timeout=timeout)
        self.process = None
        return code

    def kill(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None

    def channel(self) -> grpc.Channel:
        return grpc.insecure_channel(self.address)


@pytest.fixture
def daemon_factory(tmp_path: Path) -> Iterator[type[Daemon]]:
    """Start daemons on demand; every one started is killed at teardown."""
    started: list[Daemon] = []

    def make(
        data_dir: Path | None = None,
        env: dict[str, str | None] | None = None,
        listen: str = "127.0.0.1:0",
        config_file: Path | None = None,
    ) -> Daemon:
        d = Daemon(
            data_dir=data_dir or tmp_path / f"data{len(started)}",
            env=env or {},
            listen=listen,
            config_file=config_file,
        )
        started.append(d)
        return d

    yield make  # type: ignore[misc]
    for d in started:
        d.kill()


@pytest.fixture(scope="session")
def shared_daemon(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Daemon]:
    """One daemon with the real local model for the read-mostly integration tests."""
    d = Daemon(data_dir=tmp_path_factory.mktemp("shared") / "data")
    d.start()
    yield d
    d.kill()


@pytest.fixture(scope="session")
def memory_stub(shared_daemon: Daemon) -> Iterator[memory_service_pb2_grpc.MemoryServiceStub]:
    with shared_daemon.channel() as channel:
        yield memory_service_pb2_grpc.MemoryServiceStub(channel)


@pytest.fixture(scope="session")
def qdrant_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[QdrantServer]:
    """One real Qdrant server for the session (free loopback ports, a temporary storage
    dir, on tmpfs where there is one), stopped at the end; tests isolate their data by
    collection prefix. Skipped, saying why, where no server binary exists (see
    tests/qdrant_server.py)."""
    try:
        binary = locate()
    except NoQdrant as exc:
        pytest.skip(str(exc))
    storage = memory_dir()
    try:
        server = start_server(
            binary,
            tmp_path_factory.mktemp("qdrant-server"),
            storage_dir=storage,
            extra_env=TEST_ENV,
        )
        try:
            yield server
        finally:
            server.stop()
    finally:
        if storage is not None:
            shutil.rmtree(storage, ignore_errors=True)


#: Where a daemon-level suite keeps its data: the embedded store, or the session's
#: Qdrant server (its own collection prefix per daemon).
DAEMON_STORES = ["lancedb", "qdrant-server"]


def qdrant_daemon_env(server: QdrantServer, prefix: str, **settings: str) -> dict[str, str | None]:
    """Environment putting a daemon on ``server`` in collections named ``prefix``...;
    ``settings`` adds storage.qdrant.* values (``shared="false"``)."""
    env: dict[str, str | None] = {
        "MEMORYD_STORAGE__BACKEND": "qdrant",
        "MEMORYD_STORAGE__QDRANT__URL": server.url,
        "MEMORYD_STORAGE__QDRANT__GRPC_PORT": str(server.grpc_port),
        "MEMORYD_STORAGE__QDRANT__COLLECTION_PREFIX": prefix,
    }
    for name, value in settings.items():
        env[f"MEMORYD_STORAGE__QDRANT__{name.upper()}"] = value
    return env


def drop_collections(server: QdrantServer, prefix: str) -> int:
    """Delete the collections named ``prefix``... (REST: no gRPC channel to tear down);
    returns how many there were."""
    from qdrant_client import QdrantClient

    client = QdrantClient(url=server.url, prefer_grpc=False, check_compatibility=False)
    try:
        names = [c.name for c in client.get_collections().collections]
        mine = [name for name in names if name.startswith(prefix)]
        for name in mine:
            client.delete_collection(name)
        return len(mine)
    finally:
        client.close()


_prefixes = iter(range(1, 1 << 30))


@contextlib.contextmanager
def daemon_store_env(
    store: str, request: pytest.FixtureRequest, **settings: str
) -> Iterator[dict[str, str | None]]:
    """The daemon environment for ``store`` (one of DAEMON_STORES); the Qdrant server's
    collections are dropped on exit, and a block that made none fails (its daemons did
    not run on the server: the suite would pass without testing it)."""
    if store == "lancedb":
        yield {}
        return
    server: QdrantServer = request.getfixturevalue("qdrant_server")
    prefix = f"d{os.getpid()}_{next(_prefixes)}_"
    try:
        yield qdrant_daemon_env(server, prefix, **settings)
    except BaseException:
        drop_collections(server, prefix)
        raise
    assert drop_collections(server, prefix) > 0, "no daemon used the Qdrant server"
