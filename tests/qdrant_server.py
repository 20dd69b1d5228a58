"""A real Qdrant server for tests and benchmarks: found, started on free loopback
ports with a throwaway storage directory, and always stopped.

Where the binary comes from, in order:

1. ``QDRANT_BIN``: a Qdrant server executable (a release binary, or one built from
   source);
2. ``REPO/../shared/qdrant/qdrant.xz`` (the project's CI keeps ``shared`` beside the
   clone; ``SHARED_DIR`` names another such directory): decompressed once into ``~/.cache/memoryd-tests/qdrant-<version>/`` (or
   ``$XDG_CACHE_HOME``), under a file lock so parallel test processes do not race,
   and checked against the sha256 its README states;
3. ``qdrant`` on PATH.

:func:`locate` says why there is none (tests skip with that reason). A server is
configured by environment variables only (``QDRANT__SECTION__KEY``); the compiled-in
defaults need no config file. :class:`QdrantCluster` starts several nodes in
distributed mode (peer-to-peer ports, the first node bootstraps the others).
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import lzma
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
VERSION = "1.19.0"
#: sha256 of the decompressed binary in ../shared/qdrant (its README states it).
SHARED_SHA256 = "ab57548166dcf79b4b55882d0535eadaaf7cd23d529f7895a7d3628723318170"


def shared_dir() -> Path:
    """The project's shared files: REPO/../shared unless SHARED_DIR says otherwise."""
    configured = os.environ.get("SHARED_DIR")
    return Path(configured).expanduser() if configured else REPO.parent / "shared"


def shared_archive() -> Path:
    return shared_dir() / "qdrant" / "qdrant.xz"


#: A server answers /readyz well within a second; a loaded 2-core box may take longer.
#: Not a performance assertion.
READY_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 20.0


class NoQdrant(Exception):
    """No Qdrant server binary could be found; the message says where it looked."""


def cache_dir() -> Path:
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "memoryd-tests" / f"qdrant-{VERSION}"


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _identity(path: Path) -> str:
    """Size and modification time: a checked binary is not hashed again until they change."""
    st = path.stat()
    return f"{SHARED_SHA256} {st.st_size} {st.st_mtime_ns}"


def _decompressed(archive: Path, target_dir: Path) -> Path:
    """The archive's binary in ``target_dir`` (decompressed and checked once; the lock
    makes a concurrent process wait for the first one instead of racing it)."""
    target_dir.mkdir(parents=True, exist_ok=True)
    binary = target_dir / "qdrant"
    with (target_dir / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        stamp = target_dir / ".verified"
        if binary.exists() and stamp.exists() and stamp.read_text() == _identity(binary):
            return binary
        if binary.exists() and _sha256(binary) == SHARED_SHA256:
            stamp.write_text(_identity(binary))
            return binary
        tmp = target_dir / f"qdrant.{os.getpid()}.tmp"
        try:
            with lzma.open(archive) as src, tmp.open("wb") as dst:
                shutil.copyfileobj(src, dst, 1 << 20)
            found = _sha256(tmp)
            if found != SHARED_SHA256:
                raise NoQdrant(
                    f"{archive} decompresses to sha256 {found}, not {SHARED_SHA256} as its "
                    "README states: refusing to run it"
                )
            tmp.chmod(0o755)
            tmp.replace(binary)
            stamp.write_text(_identity(binary))
        finally:
            tmp.unlink(missing_ok=True)
    return binary


def locate() -> Path:
    """The Qdrant server binary to run, or NoQdrant saying where none was found."""
    configured = os.environ.get("QDRANT_BIN")
    if configured:
        path = Path(configured).expanduser()
        if not (path.is_file() and os.access(path, os.X_OK)):
            raise NoQdrant(f"QDRANT_BIN={configured} is not an executable file")
        return path
    archive = shared_archive()
    if archive.is_file():
        return _decompressed(archive, cache_dir())
    on_path = shutil.which("qdrant")
    if on_path:
        return Path(on_path)
    raise NoQdrant(
        "no Qdrant server: set QDRANT_BIN to a Qdrant >= 1.19 server binary (a release "
        "from github.com/qdrant/qdrant/releases), or put `qdrant` on PATH; the project's "
        f"CI uses {archive} (not in a user's clone)"
    )


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def _get(url: str, timeout: float = 2.0) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


@dataclass
class QdrantServer:
    """One Qdrant process on 127.0.0.1 with its own ports and storage directory."""

    binary: Path
    workdir: Path
    http_port: int = field(default_factory=free_port)
    grpc_port: int = field(default_factory=free_port)
    #: Distributed mode: the peer-to-peer port (None: a single node).
    p2p_port: int | None = None
    #: A distributed node's first peer to join (None: this node bootstraps the cluster).
    bootstrap: str | None = None
    #: Where the collections live (None: ``workdir/storage``).
    storage_dir: Path | None = None
    #: More QDRANT__* settings.
    extra_env: dict[str, str] = field(default_factory=dict)
    process: subprocess.Popen[bytes] | None = None
    log_path: Path | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.http_port}"

    @property
    def p2p_uri(self) -> str:
        assert self.p2p_port is not None
        return f"http://127.0.0.1:{self.p2p_port}"

    def _env(self) -> dict[str, str]:
        storage = self.storage_dir or self.workdir / "storage"
        env = {
            **{k: v for k, v in os.environ.items() if not k.startswith("QDRANT__")},
            "QDRANT__SERVICE__HOST": "127.0.0.1",
            "QDRANT__SERVICE__HTTP_PORT": str(self.http_port),
            "QDRANT__SERVICE__GRPC_PORT": str(self.grpc_port),
            "QDRANT__STORAGE__STORAGE_PATH": str(storage),
            "QDRANT__STORAGE__SNAPSHOTS_PATH": str(self.workdir / "snapshots"),
            "QDRANT_INIT_FILE_PATH": str(self.workdir / ".initialized"),
            "QDRANT__TELEMETRY_DISABLED": "true",
            "QDRANT__LOG_LEVEL": "WARN",
            **self.extra_env,
        }
        if self.p2p_port is not None:
            env["QDRANT__CLUSTER__ENABLED"] = "true"
            env["QDRANT__CLUSTER__P2P__PORT"] = str(self.p2p_port)
        return env

    def start(self) -> QdrantServer:
        """Start and wait until /readyz answers 200 (raises with the log otherwise)."""
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.log_path = self.workdir / "qdrant.log"
        args = [str(self.binary)]
        if self.p2p_port is not None:
            if self.bootstrap is None:
                args += ["--uri", self.p2p_uri]
            else:
                args += ["--uri", self.p2p_uri, "--bootstrap", self.bootstrap]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                args,
                cwd=self.workdir,
                env=self._env(),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self.wait_ready()
        return self

    def wait_ready(self, timeout_s: float = READY_TIMEOUT_S) -> None:
        deadline = time.monotonic() + timeout_s
        while True:
            assert self.process is not None
            if self.process.poll() is not None:
                raise RuntimeError(
                    f"qdrant exited with {self.process.returncode}:\n{self.logs()[-4000:]}"
                )
            with contextlib.suppress(OSError):
                status, _ = _get(f"{self.url}/readyz")
                if status == 200:
                    return
            if time.monotonic() > deadline:
                self.kill()
                raise RuntimeError(f"qdrant did not become ready:\n{self.logs()[-4000:]}")
            time.sleep(0.05)

    def logs(self) -> str:
        if self.log_path is None or not self.log_path.exists():
            return ""
        return self.log_path.read_text(errors="replace")

    @property
    def running(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self) -> None:
        """SIGTERM, then SIGKILL if it has not exited in STOP_TIMEOUT_S."""
        if self.process is None:
            return
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def kill(self) -> None:
        """SIGKILL (a node that dies)."""
        if self.process is not None and self.process.poll() is None:
            self.process.kill()
            self.process.wait()
        self.process = None


#: For tests: small WAL segments (a collection preallocates one per shard).
TEST_ENV = {"QDRANT__STORAGE__WAL__WAL_CAPACITY_MB": "1"}


def memory_dir(prefix: str = "qdrant-") -> Path | None:
    """A fresh directory on tmpfs (/dev/shm) when there is one, else None. Creating a
    collection and its payload indexes fsyncs several files: on a shared 2-core box's
    disk that took 0.3-1.5 s per collection, on tmpfs ~20 ms (measured), and the
    storage suites create a few thousand. The caller removes it."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        return None
    return Path(tempfile.mkdtemp(prefix=prefix, dir=shm))


def start_server(
    binary: Path,
    workdir: Path,
    *,
    storage_dir: Path | None = None,
    extra_env: dict[str, str] | None = None,
    attempts: int = 3,
) -> QdrantServer:
    """A single-node server on free ports (another process may take a port between
    picking and binding it: then it is tried again on new ones)."""
    error: Exception | None = None
    for i in range(attempts):
        server = QdrantServer(
            binary,
            workdir / f"try{i}" if i else workdir,
            storage_dir=None if storage_dir is None else storage_dir / f"try{i}",
            extra_env=dict(extra_env or {}),
        )
        try:
            return server.start()
        except RuntimeError as exc:
            server.kill()
            error = exc
    assert error is not None
    raise error


@dataclass
class QdrantCluster:
    """Several Qdrant nodes in distributed mode on loopback (Raft consensus)."""

    nodes: list[QdrantServer]

    @classmethod
    def start(
        cls, binary: Path, workdir: Path, size: int = 3, extra_env: dict[str, str] | None = None
    ) -> QdrantCluster:
        env = dict(extra_env or {})
        first = QdrantServer(binary, workdir / "node0", p2p_port=free_port(), extra_env=env).start()
        nodes = [first]
        try:
            for i in range(1, size):
                node = QdrantServer(
                    binary,
                    workdir / f"node{i}",
                    p2p_port=free_port(),
                    bootstrap=first.p2p_uri,
                    extra_env=env,
                )
                nodes.append(node.start())
            cluster = cls(nodes)
            cluster.wait_peers(size)
        except BaseException:
            for node in nodes:
                node.kill()
            raise
        return cluster

    def cluster_info(self, node: QdrantServer) -> dict[str, object]:
        import json

        status, body = _get(f"{node.url}/cluster")
        if status != 200:
            return {}
        result: dict[str, object] = json.loads(body)["result"]
        return result

    def wait_peers(self, count: int, timeout_s: float = READY_TIMEOUT_S) -> None:
        """Until every running node knows ``count`` peers and a leader."""
        deadline = time.monotonic() + timeout_s
        while True:
            ok = True
            for node in self.nodes:
                if not node.running:
                    continue
                info = self.cluster_info(node)
                peers = info.get("peers")
                raft = info.get("raft_info")
                formed = isinstance(peers, dict) and len(peers) == count
                led = isinstance(raft, dict) and raft.get("leader") is not None
                ok = ok and formed and led
            if ok:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"qdrant cluster did not form {count} peers in {timeout_s} s")
            time.sleep(0.1)

    @property
    def urls(self) -> list[str]:
        return [n.url for n in self.nodes]

    def stop(self) -> None:
        for node in self.nodes:
            node.stop()


@contextlib.contextmanager
def running_server(workdir: Path | None = None) -> Iterator[QdrantServer]:
    """A started single-node server, stopped on exit (also on failure)."""
    binary = locate()
    with contextlib.ExitStack() as stack:
        if workdir is None:
            workdir = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="qdrant-")))
        server = start_server(binary, workdir)
        stack.callback(server.stop)
        yield server
