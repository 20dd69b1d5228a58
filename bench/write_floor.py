"""The write floor of `make bench`'s writes section: a grpc.aio server whose SetMemory
and Remember append the request to a file and answer once it is fsynced, group
committed (one writer task takes everything queued, writes it and fsyncs once in a
worker thread, then answers every call of the group: what memoryd's write-ahead log
does, and nothing else). What a durable write cannot cost less than, on this machine,
through the same client and transport.

    python bench/write_floor.py --listen 127.0.0.1:0 --dir DIR --ready-file FILE
"""

from __future__ import annotations

import argparse
import asyncio
import os
import signal
import struct
from pathlib import Path
from typing import Any

import grpc

from memoryd_proto.v1 import memory_service_pb2 as mpb
from memoryd_proto.v1 import memory_service_pb2_grpc as mgrpc


class GroupCommitFile:
    """Appended records, fsynced once per group."""

    def __init__(self, path: Path) -> None:
        self._fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
        self._queue: asyncio.Queue[tuple[bytes, asyncio.Future[None]]] = asyncio.Queue()
        self._task = asyncio.create_task(self._run())
        self.groups = 0

    async def append(self, record: bytes) -> None:
        done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((struct.pack("<I", len(record)) + record, done))
        await done

    async def _run(self) -> None:
        while True:
            group = [await self._queue.get()]
            while not self._queue.empty():
                group.append(self._queue.get_nowait())
            data = b"".join(record for record, _ in group)
            await asyncio.to_thread(self._write, data)
            self.groups += 1
            for _, done in group:
                done.set_result(None)

    def _write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self._fd, view) :]
        os.fsync(self._fd)


class FloorServicer(mgrpc.MemoryServiceServicer):
    def __init__(self, log: GroupCommitFile) -> None:
        self.log = log

    async def SetMemory(self, request: Any, context: Any) -> mpb.SetMemoryResponse:
        await self.log.append(request.SerializeToString())
        return mpb.SetMemoryResponse()

    async def Remember(self, request: Any, context: Any) -> mpb.RememberResponse:
        await self.log.append(request.SerializeToString())
        return mpb.RememberResponse()


async def serve(listen: str, directory: Path, ready: Path) -> None:
    server = grpc.aio.server()
    mgrpc.add_MemoryServiceServicer_to_server(
        FloorServicer(GroupCommitFile(directory / "floor.log")), server
    )
    port = server.add_insecure_port(listen)
    await server.start()
    await asyncio.to_thread(_announce, ready, f"{listen.rsplit(':', 1)[0]}:{port}")
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await stop.wait()
    await server.stop(1)


def _announce(ready: Path, address: str) -> None:
    tmp = ready.with_suffix(".tmp")
    tmp.write_text(address)
    tmp.replace(ready)  # atomic: the bench never reads a partial address


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--listen", default="127.0.0.1:0")
    parser.add_argument("--dir", type=Path, required=True)
    parser.add_argument("--ready-file", type=Path, required=True)
    args = parser.parse_args()
    args.dir.mkdir(parents=True, exist_ok=True)
    asyncio.run(serve(args.listen, args.dir, args.ready_file))


if __name__ == "__main__":
    main()
