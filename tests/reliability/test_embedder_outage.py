"""The embedding provider fails, slows down and recovers; writes and recall go on.

A real OpenAI-compatible HTTP server on loopback feeds the daemon's openai embedder.
The test makes it answer 500, then stall beyond the client timeout, then recover:
writes succeed degraded into the hashing fallback space, recall works degraded, and
after recovery the fallback memories are re-embedded by the provider.
"""

from __future__ import annotations

import json
import threading
import time
import zlib
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import numpy as np
import pytest

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc
from tests.conftest import Daemon

DIM = 32
MODEL = "test-embedder"
PRIMARY = f"openai:{MODEL}"
FALLBACK = f"hashing-v1-{DIM}"
AGENT = "outage"


class Provider(ThreadingHTTPServer):
    mode = "ok"  # ok | fail | slow
    calls = 0


class _Handler(BaseHTTPRequestHandler):
    server: Provider

    def log_message(self, *args: object) -> None:
        return None

    def do_POST(self) -> None:  # http.server calls it by this name
        body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
        self.server.calls += 1
        if self.server.mode == "fail":
            self.send_response(500)
            self.end_headers()
            self.wfile.write(b"provider down")
            return
        if self.server.mode == "slow":
            time.sleep(6)  # beyond the daemon's 3 s timeout
        data = []
        for i, text in enumerate(body["input"]):
            rng = np.random.default_rng(zlib.crc32(text.encode()))
            data.append({"index": i, "embedding": rng.standard_normal(DIM).tolist()})
        out = json.dumps({"data": data, "model": body["model"]}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)


@pytest.fixture
def provider() -> Iterator[Provider]:
    server = Provider(("127.0.0.1", 0), _Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


def _components(resp: object) -> set[str]:
    return {d.component for d in resp.degraded}  # type: ignore[attr-defined]


def test_embedder_down_slow_and_back(
    provider: Provider, daemon_factory: Callable[..., Daemon]
) -> None:
    daemon = daemon_factory(
        env={
            "MEMORYD_EMBEDDER": "openai",
            "MEMORYD_EMBEDDING__OPENAI_URL": f"http://127.0.0.1:{provider.server_port}/v1",
            "MEMORYD_EMBEDDING__OPENAI_MODEL": MODEL,
            "MEMORYD_EMBEDDING__OPENAI_DIMENSION": str(DIM),
            "MEMORYD_EMBEDDING__OPENAI_TIMEOUT_S": "3",
            "MEMORYD_EMBEDDING__CACHE_SIZE": "0",
            "MEMORYD_RESILIENCE__EMBEDDER_TIMEOUT_S": "3",
            "MEMORYD_RESILIENCE__EMBEDDER_PROBE_AFTER_S": "0.2",
            "MEMORYD_RESILIENCE__REEMBED_INTERVAL_S": "0.2",
            "MEMORYD_MAINTENANCE__ENABLED": "false",
        }
    )
    daemon.start()
    with daemon.channel() as channel:
        stub = mgrpc.MemoryServiceStub(channel)

        def remember(content: str) -> mpb.RememberResponse:
            resp: mpb.RememberResponse = stub.Remember(
                mpb.RememberRequest(agent_id=AGENT, content=content), timeout=20
            )
            return resp

        def model_of(memory_id: str) -> str:
            got = stub.GetMemory(mpb.GetMemoryRequest(agent_id=AGENT, id=memory_id))
            return str(got.memory.embedding_model)

        healthy = remember("the deploy runs on tuesdays")
        assert _components(healthy) == set()
        assert healthy.memory.embedding_model == PRIMARY

        provider.mode = "fail"
        down = remember("the database password rotates monthly")
        assert "embedder" in _components(down)
        assert down.memory.embedding_model == FALLBACK
        batch = stub.RememberBatch(
            mpb.RememberBatchRequest(
                agent_id=AGENT,
                items=[mpb.RememberRequest(content=f"outage note {i}") for i in range(5)],
            ),
            timeout=20,
        )
        assert "embedder" in _components(batch)

        # Recall while the provider is down: fallback space plus full text.
        found = stub.Recall(mpb.RecallRequest(agent_id=AGENT, query="database password"))
        assert "embedder" in _components(found)
        assert found.embedding_model == FALLBACK
        assert down.memory.id in [r.memory.id for r in found.results]
        # Full text reaches memories of the provider's space too.
        found = stub.Recall(mpb.RecallRequest(agent_id=AGENT, query="deploy tuesdays"))
        assert healthy.memory.id in [r.memory.id for r in found.results]

        provider.mode = "slow"
        slow = remember("the cache is warmed at noon")
        assert "embedder" in _components(slow)
        assert slow.memory.embedding_model == FALLBACK

        provider.mode = "ok"
        waiting = [down.memory.id, slow.memory.id, *(r.memory.id for r in batch.results)]
        deadline = time.monotonic() + 60
        while any(model_of(i) == FALLBACK for i in waiting):
            assert time.monotonic() < deadline, "fallback memories were not re-embedded"
            time.sleep(0.1)
        assert {model_of(i) for i in waiting} == {PRIMARY}
        # Once the provider answers, recall is served in its space again. One call may
        # still time out on a loaded box (the full suite at a load of 10+): a single
        # failure falls back for that call without opening the breaker, and is
        # reported. Recovery is the guarantee: within a few calls, not forever degraded.
        reasons: list[str] = []
        for _ in range(5):
            back = stub.Recall(mpb.RecallRequest(agent_id=AGENT, query="database password"))
            if not back.degraded:
                break
            reasons.extend(d.reason for d in back.degraded)
        assert _components(back) == set(), reasons
        assert back.embedding_model == PRIMARY
        assert down.memory.id in [r.memory.id for r in back.results]
    daemon.stop()
