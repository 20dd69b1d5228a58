"""A small real HTTP server on 127.0.0.1 answering like the chat completions API.

Tests start it (stdlib http.server in a thread) and point memoryd's LLM client at
``server.url``. ``mode`` picks the behaviour: "ok" answers with ``reply(request)``,
"error" with HTTP 500, "slow" blocks until released (drive a client timeout),
"malformed" with a body that is not JSON, "no_choices" with JSON lacking choices.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Literal

Mode = Literal["ok", "error", "slow", "malformed", "no_choices"]
Reply = Callable[[dict[str, Any]], str]
#: A slow answer is released at teardown at the latest (no test waits for this).
SLOW_LIMIT_S = 30.0

EXTRACTED = [
    {
        "content": "The user's dentist appointment is on 2026-02-23 at 10:00",
        "memory_type": "fact",
        "importance": 0.8,
        "tags": ["calendar"],
    },
    {"content": "The user prefers morning appointments", "memory_type": "preference"},
]


def default_reply(request: dict[str, Any]) -> str:
    """A summary for summary prompts, a JSON array for extraction prompts."""
    system = request["messages"][0]["content"]
    if "extract long-term memories" in system:
        return "```json\n" + json.dumps(EXTRACTED) + "\n```"
    turns = request["messages"][-1]["content"].count("\n")
    return f"LLM SUMMARY of a conversation ({turns} lines of prompt)."


class ChatServer:
    def __init__(self) -> None:
        self.mode: Mode = "ok"
        self.reply: Reply = default_reply
        self.requests: list[dict[str, Any]] = []
        self.headers: list[dict[str, str]] = []
        self.release = threading.Event()
        self._httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._httpd.daemon_threads = True
        # A short poll interval: shutdown() waits for the loop to notice it.
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )

    @property
    def url(self) -> str:
        host, port = self._httpd.server_address[:2]
        return f"http://{host!s}:{port}/v1"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self.release.set()
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join()

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(length))
                server.requests.append(body)
                server.headers.append(dict(self.headers.items()))
                if self.path != "/v1/chat/completions":
                    self._send(404, b'{"error": "not found"}')
                elif server.mode == "error":
                    self._send(500, b'{"error": {"message": "model overloaded"}}')
                elif server.mode == "slow":
                    server.release.wait(SLOW_LIMIT_S)
                    self._send(200, _completion("too late"))
                elif server.mode == "malformed":
                    self._send(200, b"<html>this is not json")
                elif server.mode == "no_choices":
                    self._send(200, b'{"id": "x", "object": "chat.completion"}')
                else:
                    self._send(200, _completion(server.reply(body)))

            def _send(self, status: int, payload: bytes) -> None:
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout tests)

        return Handler


def _completion(text: str) -> bytes:
    return json.dumps(
        {
            "id": "chatcmpl-test",
            "object": "chat.completion",
            "model": "test-model",
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": text},
                    "finish_reason": "stop",
                }
            ],
            "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
        }
    ).encode()


@contextmanager
def running_chat_server() -> Iterator[ChatServer]:
    server = ChatServer()
    server.start()
    try:
        yield server
    finally:
        server.stop()
