"""OpenAICompatibleEmbedder against a real local HTTP server speaking the OpenAI API."""

from __future__ import annotations

import json
import socket
import threading
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

from memoryd.config import EmbeddingSettings
from memoryd.domain.errors import EmbeddingError
from memoryd.embedding import CachingEmbedder
from memoryd.embedding.factory import build_embedder
from memoryd.embedding.openai import OpenAICompatibleEmbedder

DIM = 8
API_KEY = "sk-test-secret"


def fake_vector(text: str) -> list[float]:
    """Unnormalised and text-dependent, so order and normalisation are both visible."""
    return [float(len(text) + 1)] + [float(i % 3) for i in range(DIM - 1)]


def expected(texts: list[str]) -> npt.NDArray[np.float32]:
    vectors = np.array([fake_vector(t) for t in texts], dtype=np.float32)
    normalised: npt.NDArray[np.float32] = vectors / np.linalg.norm(vectors, axis=1, keepdims=True)
    return normalised


@dataclass
class FakeOpenAI:
    """What the server answers (``mode``) and what it saw."""

    url: str = ""
    mode: str = "ok"
    requests: list[dict[str, Any]] = field(default_factory=list)
    headers: list[dict[str, str]] = field(default_factory=list)
    release: threading.Event = field(default_factory=threading.Event)


def make_handler(state: FakeOpenAI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:  # quiet
            pass

        def do_POST(self) -> None:
            body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
            state.requests.append(body)
            state.headers.append(dict(self.headers))
            if self.path != "/v1/embeddings":
                return self.reply(404, b'{"error": "not found"}')
            if state.mode == "500":
                return self.reply(500, b'{"error": {"message": "model crashed"}}')
            if state.mode == "401":
                key = self.headers.get("Authorization", "")
                return self.reply(401, json.dumps({"error": f"bad key {key}"}).encode())
            if state.mode == "malformed":
                return self.reply(200, b"{not json")
            if state.mode == "no-data":
                return self.reply(200, b'{"object": "list"}')
            if state.mode == "hang":
                state.release.wait(10)  # until the test ends; the client has given up by then
                return None
            extra = [0.0] if state.mode == "wrong-dim" else []
            data = [
                {"object": "embedding", "index": i, "embedding": fake_vector(t) + extra}
                for i, t in enumerate(body["input"])
            ]
            data.reverse()  # the API does not promise order; the client sorts by index
            answer = {"object": "list", "data": data, "model": body["model"], "usage": {}}
            return self.reply(200, json.dumps(answer).encode())

        def reply(self, status: int, payload: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(payload)))
            self.end_headers()
            self.wfile.write(payload)

    return Handler


@pytest.fixture
def server() -> Iterator[FakeOpenAI]:
    state = FakeOpenAI()
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), make_handler(state))
    httpd.daemon_threads = True
    state.url = f"http://127.0.0.1:{httpd.server_address[1]}/v1"
    # A short poll interval keeps shutdown() (which waits for the next poll) fast.
    thread = threading.Thread(target=httpd.serve_forever, args=(0.01,), daemon=True)
    thread.start()
    yield state
    state.release.set()
    httpd.shutdown()
    httpd.server_close()
    thread.join()


def make(url: str, **overrides: Any) -> OpenAICompatibleEmbedder:
    options: dict[str, Any] = {
        "url": url,
        "model": "test-embed",
        "dimension": DIM,
        "api_key": API_KEY,
        "timeout_s": 5.0,
        "max_batch_size": 4,
    }
    options.update(overrides)
    return OpenAICompatibleEmbedder(**options)


@pytest.fixture
async def embedder(server: FakeOpenAI) -> AsyncIterator[OpenAICompatibleEmbedder]:
    client = make(server.url)
    yield client
    await client.close()


async def test_success_orders_by_index_and_normalises(
    server: FakeOpenAI, embedder: OpenAICompatibleEmbedder
) -> None:
    texts = ["a", "bb", "ccc"]
    vectors = await embedder.embed(texts, kind="query")

    assert vectors.dtype == np.float32
    np.testing.assert_allclose(vectors, expected(texts), atol=1e-6)
    assert server.requests == [{"model": "test-embed", "input": texts}]
    assert embedder.model_id == "openai:test-embed"
    assert embedder.dimension == DIM


async def test_batches_of_max_batch_size(
    server: FakeOpenAI, embedder: OpenAICompatibleEmbedder
) -> None:
    texts = [f"text {'x' * i}" for i in range(10)]
    vectors = await embedder.embed(texts)

    assert [len(r["input"]) for r in server.requests] == [4, 4, 2]
    np.testing.assert_allclose(vectors, expected(texts), atol=1e-6)


async def test_auth_header_sent(server: FakeOpenAI, embedder: OpenAICompatibleEmbedder) -> None:
    await embedder.embed(["hi"])
    assert server.headers[0]["Authorization"] == f"Bearer {API_KEY}"


async def test_no_auth_header_without_key(server: FakeOpenAI) -> None:
    client = make(server.url, api_key=None)
    try:
        await client.embed(["hi"])
    finally:
        await client.close()
    assert "Authorization" not in server.headers[0]


async def test_empty_input_makes_no_request(
    server: FakeOpenAI, embedder: OpenAICompatibleEmbedder
) -> None:
    assert (await embedder.embed([])).shape == (0, DIM)
    assert server.requests == []


@pytest.mark.parametrize(
    ("mode", "message"),
    [
        ("500", "HTTP 500"),
        ("malformed", "not JSON"),
        ("no-data", "no 'data' list"),
        ("wrong-dim", f"returned {DIM + 1}, expected {DIM}"),
    ],
)
async def test_provider_failures_raise_embedding_error(
    server: FakeOpenAI, embedder: OpenAICompatibleEmbedder, mode: str, message: str
) -> None:
    server.mode = mode
    with pytest.raises(EmbeddingError, match=message):
        await embedder.embed(["hello"])


async def test_api_key_never_in_error(
    server: FakeOpenAI, embedder: OpenAICompatibleEmbedder
) -> None:
    server.mode = "401"
    with pytest.raises(EmbeddingError) as info:
        await embedder.embed(["hello"])
    assert "HTTP 401" in info.value.message
    assert API_KEY not in str(info.value)


async def test_connection_refused() -> None:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    client = make(f"http://127.0.0.1:{port}/v1")
    try:
        with pytest.raises(EmbeddingError, match="ConnectError"):
            await client.embed(["hello"])
    finally:
        await client.close()


async def test_timeout(server: FakeOpenAI) -> None:
    server.mode = "hang"
    client = make(server.url, timeout_s=0.2)
    try:
        with pytest.raises(EmbeddingError, match="timed out"):
            await client.embed(["hello"])
    finally:
        await client.close()


async def test_factory_builds_cached_openai(server: FakeOpenAI) -> None:
    settings = EmbeddingSettings(
        openai_url=server.url, openai_model="m", openai_dimension=DIM, cache_size=16
    )
    built = build_embedder("openai", settings)
    try:
        assert isinstance(built, CachingEmbedder)
        assert built.model_id == "openai:m"
        await built.embed(["same", "same"])
        await built.embed(["same"])
        assert len(server.requests) == 1
    finally:
        await built.close()


def test_factory_requires_openai_dimension() -> None:
    with pytest.raises(ValueError, match="openai_dimension"):
        build_embedder("openai", EmbeddingSettings())
