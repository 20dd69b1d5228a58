"""A channel to Qdrant connects to a server that is slow to answer the handshake.

gRPC core gives a connect attempt ``grpc.min_reconnect_backoff_ms`` at least (its
``min_connect_timeout``). When wire.RECONNECT_BACKOFF set it to 100 ms for quick
reconnects, every connect whose HTTP/2 SETTINGS frame came later (a loaded server, a
slow link) failed with "timed out before receiving SETTINGS frame", and a store on a
busy Qdrant server did not open. Here a proxy holds each new connection back before
relaying it to a real gRPC server: the call must still be answered.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

import grpc
from qdrant_client import grpc as qgrpc
from qdrant_client import models

from memoryd.storage.qdrant.wire import PointsChannel

#: How long the proxy holds a new connection before relaying it: longer than the
#: 100 ms that failed, far shorter than gRPC's default connect timeout (20 s).
HELD_S = 0.5


async def _count(request: qgrpc.CountPoints, _context: grpc.aio.ServicerContext) -> object:
    return qgrpc.CountResponse(result=qgrpc.CountResult(count=7))


@contextlib.asynccontextmanager
async def _points_server() -> AsyncIterator[int]:
    server = grpc.aio.server()
    handler = grpc.method_handlers_generic_handler(
        "qdrant.Points",
        {
            "Count": grpc.unary_unary_rpc_method_handler(
                _count,
                request_deserializer=qgrpc.CountPoints.FromString,
                response_serializer=qgrpc.CountResponse.SerializeToString,
            )
        },
    )
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    try:
        yield port
    finally:
        await server.stop(None)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    with contextlib.suppress(ConnectionError):
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    writer.close()


@contextlib.asynccontextmanager
async def _slow_proxy(target: int) -> AsyncIterator[int]:
    async def relay(client_r: asyncio.StreamReader, client_w: asyncio.StreamWriter) -> None:
        await asyncio.sleep(HELD_S)
        server_r, server_w = await asyncio.open_connection("127.0.0.1", target)
        await asyncio.gather(_pipe(client_r, server_w), _pipe(server_r, client_w))

    proxy = await asyncio.start_server(relay, "127.0.0.1", 0)
    try:
        yield proxy.sockets[0].getsockname()[1]
    finally:
        proxy.close()


async def test_a_slow_handshake_still_connects() -> None:
    async with _points_server() as port, _slow_proxy(port) as slow:
        channel = PointsChannel(f"http://127.0.0.1:{slow}", slow, None, timeout_s=30.0)
        try:
            assert await channel.count("c", models.Filter(), None) == 7
        finally:
            await channel.close()
