"""SIGKILL between a SetMemory's answer and its mirror's pass loses nothing.

A key's mirror memory is embedded behind the answer (keys.mirror_embedding "behind",
service/keyed/pending.py). A real OpenAI-compatible HTTP embedder on loopback holds
the pass's embedding request; the daemon answers the SetMemory anyway (the answer
never waits for the model), is killed with SIGKILL while the pass waits, and restarts
on the same data directory: the start's check embeds the key's new value, and the
first Recall already finds it (read-your-writes across the crash).
"""

from __future__ import annotations

import json
import threading
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import pytest
from google.protobuf import json_format, struct_pb2

from memoryd_proto.v1 import common_pb2 as pb
from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import Daemon

DIM = 32
MODEL = "test-embedder"
AGENT = "behind"
USER = pb.Provenance(kind=pb.PROVENANCE_KIND_USER)


class Provider(ThreadingHTTPServer):
    #: Set: answer; clear: hold each request until set (``waiting`` says one came).
    answering: threading.Event
    waiting: threading.Event


class _Handler(BaseHTTPRequestHandler):
    server: Provider

    def log_message(self, *args: object) -> None:
        return None

    def do_POST(self) -> None:  # http.server calls it by this name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        if not self.server.answering.is_set():
            self.server.waiting.set()
            self.server.answering.wait()
        data = []
        for i, text in enumerate(body["input"]):
            rng = np.random.default_rng(zlib.crc32(text.encode()))
            data.append({"index": i, "embedding": rng.standard_normal(DIM).tolist()})
        out = json.dumps({"data": data, "model": body["model"]}).encode()
        try:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(out)))
            self.end_headers()
            self.wfile.write(out)
        except OSError:
            return  # its caller was killed meanwhile


@pytest.fixture
def provider() -> Iterator[Provider]:
    server = Provider(("127.0.0.1", 0), _Handler)
    server.answering, server.waiting = threading.Event(), threading.Event()
    server.answering.set()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.answering.set()
    server.shutdown()
    server.server_close()


def _value(data: Any) -> struct_pb2.Value:
    out = struct_pb2.Value()
    json_format.ParseDict(data, out)
    return out


def _set(stub: mgrpc.MemoryServiceStub, key: str, data: Any) -> mpb.KeyEntry:
    request = mpb.SetMemoryRequest(agent_id=AGENT, key=key, content=_value(data), source=USER)
    entry: mpb.KeyEntry = stub.SetMemory(request, timeout=30).entry
    return entry


def _recalled(stub: mgrpc.MemoryServiceStub, query: str) -> list[str]:
    found = stub.Recall(mpb.RecallRequest(agent_id=AGENT, query=query, limit=5), timeout=60)
    return [r.memory.content for r in found.results]


def test_sigkill_between_the_answer_and_the_pass_loses_no_mirror(
    provider: Provider, daemon_factory: Callable[..., Daemon]
) -> None:
    daemon = daemon_factory(
        env={
            "MEMORYD_EMBEDDER": "openai",
            "MEMORYD_EMBEDDING__OPENAI_URL": f"http://127.0.0.1:{provider.server_port}/v1",
            "MEMORYD_EMBEDDING__OPENAI_MODEL": MODEL,
            "MEMORYD_EMBEDDING__OPENAI_DIMENSION": str(DIM),
            "MEMORYD_EMBEDDING__OPENAI_TIMEOUT_S": "120",
            "MEMORYD_EMBEDDING__CACHE_SIZE": "0",
            "MEMORYD_RESILIENCE__EMBEDDER_TIMEOUT_S": "120",
            "MEMORYD_MAINTENANCE__ENABLED": "false",
        }
    )
    daemon.start()
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        _set(stub, "/user/drink", "green tea")
        assert _recalled(stub, "green tea") == ["green tea"]
        provider.answering.clear()  # the model stops answering
        entry = _set(stub, "/user/drink", "black tea")  # answered all the same
        assert entry.version == 2
        provider.waiting.wait(timeout=60)  # the pass is embedding it
        assert provider.waiting.is_set()
    assert daemon.process is not None
    daemon.process.kill()  # SIGKILL: the pass never writes the mirror
    daemon.process.wait()
    daemon.process = None
    provider.answering.set()

    daemon.start()
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)
        assert _recalled(stub, "black tea") == ["black tea"]
        got = stub.GetMemory(mpb.GetMemoryRequest(agent_id=AGENT, id=entry.memory_id))
        assert (got.memory.content, got.memory.version) == ("black tea", 2)
        assert got.memory.embedding_model == f"openai:{MODEL}"
    daemon.stop()
