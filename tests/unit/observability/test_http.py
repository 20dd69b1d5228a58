"""The /metrics endpoint: served from the registry passed in, on the configured address."""

from __future__ import annotations

import socket
import urllib.request

import pytest
from prometheus_client.parser import text_string_to_metric_families

from memoryd.observability.http import MetricsListenError, MetricsServer, parse_listen
from memoryd.observability.metrics import Metrics


def test_parse_listen() -> None:
    assert parse_listen("127.0.0.1:9464") == ("127.0.0.1", 9464)
    assert parse_listen("[::1]:0") == ("::1", 0)
    assert parse_listen(":9464") == ("0.0.0.0", 9464)
    for bad in ("9464", "host:", "host:port", "h:70000"):
        with pytest.raises(MetricsListenError):
            parse_listen(bad)


def scrape(address: str) -> dict[str, float]:
    with urllib.request.urlopen(f"http://{address}/metrics", timeout=10) as response:
        assert response.status == 200
        assert response.headers["Content-Type"].startswith("text/plain")
        text = response.read().decode()
    return {
        s.name: s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if not s.labels
    }


async def test_serves_the_registry_on_a_free_port_and_stops() -> None:
    metrics = Metrics(process_metrics=False)
    metrics.wal_backlog(3)
    server = MetricsServer(metrics.registry, "127.0.0.1:0")
    server.start()
    address = server.address
    try:
        assert not address.endswith(":0")
        assert scrape(address)["memoryd_wal_backlog_entries"] == 3
        metrics.wal_backlog(5)
        assert scrape(address)["memoryd_wal_backlog_entries"] == 5
    finally:
        await server.close()
    with pytest.raises(OSError):
        scrape(address)
    await server.close()  # idempotent


async def test_a_port_in_use_is_a_clear_error() -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = MetricsServer(Metrics(process_metrics=False).registry, f"127.0.0.1:{port}")
        with pytest.raises(MetricsListenError, match=f"127.0.0.1:{port}"):
            server.start()


async def test_a_port_in_use_can_fall_back_to_a_free_one() -> None:
    metrics = Metrics(process_metrics=False)
    metrics.wal_backlog(7)
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        server = MetricsServer(metrics.registry, f"127.0.0.1:{port}")
        assert server.start(or_free_port=True) is True
        try:
            assert server.address.startswith("127.0.0.1:")
            assert server.address != f"127.0.0.1:{port}"
            assert scrape(server.address)["memoryd_wal_backlog_entries"] == 7
        finally:
            await server.close()
    free = MetricsServer(metrics.registry, "127.0.0.1:0")
    assert free.start(or_free_port=True) is False  # nothing was in the way
    await free.close()
