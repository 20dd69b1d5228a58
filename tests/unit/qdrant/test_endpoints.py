"""Which Qdrant endpoint memoryd talks to: the gRPC port is set or derived from the
URL, never a default that may be another server's (issue 30, item 9)."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from memoryd.storage.registry import qdrant_options
from memoryd.storage.settings import QdrantSettings


@pytest.mark.parametrize(
    ("url", "grpc_port", "prefer_grpc", "talks_to"),
    [
        ("http://qdrant:6333", None, True, 6334),  # Qdrant's default pairing
        ("http://qdrant", None, True, 6334),  # qdrant-client reads no port as 6333
        ("qdrant:6333", None, True, 6334),
        ("https://q.example.com:6333/", None, True, 6334),
        ("http://127.0.0.1:7333", None, True, None),  # nothing says where gRPC is: REST
        ("http://127.0.0.1:7333", 7334, True, 7334),
        ("http://qdrant:6333", 16334, True, 16334),
        ("http://qdrant:6333", None, False, None),
        ("http://127.0.0.1:7333", 7334, False, None),
    ],
)
def test_the_grpc_port_is_set_or_derived_never_defaulted(
    url: str, grpc_port: int | None, prefer_grpc: bool, talks_to: int | None, tmp_path: Path
) -> None:
    settings = QdrantSettings(url=url, grpc_port=grpc_port, prefer_grpc=prefer_grpc)
    port, why = settings.grpc_endpoint()
    assert port == talks_to and why
    options = qdrant_options(settings, tmp_path, "memories")
    assert options.grpc is (talks_to is not None)
    assert options.grpc_port == talks_to
    assert options.where == (f"{url} (gRPC port {talks_to})" if talks_to else f"{url} (REST)")


def test_the_reason_for_rest_names_the_setting() -> None:
    _, why = QdrantSettings(url="http://127.0.0.1:7333").grpc_endpoint()
    assert "storage.qdrant.grpc_port" in why


@pytest.mark.parametrize("url", ["http://q:70000", "http://q:port"])
def test_a_url_with_a_bad_port_is_refused(url: str) -> None:
    with pytest.raises(ValidationError, match="url"):
        QdrantSettings(url=url)
