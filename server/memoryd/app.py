"""Wiring: components start in dependency order and stop in reverse.

logging -> data dir lock -> embedder -> store -> write batcher -> access buffer
-> services -> gRPC server -> health SERVING. Stop: health NOT_SERVING, stop
accepting and drain in-flight calls within the grace period, then flush and close
everything else in reverse.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import signal
from contextlib import AsyncExitStack
from pathlib import Path
from typing import IO

import structlog

from memoryd.api.auth import SidecarAuthenticator
from memoryd.api.server import GrpcServer, start_server
from memoryd.config import Settings
from memoryd.embedding import build_embedder
from memoryd.service.access_stats import AccessStatsBuffer
from memoryd.service.memory import MemoryService
from memoryd.service.pagination import PageTokenCodec
from memoryd.service.write_batcher import WriteBatcher
from memoryd.storage import build_store

log = structlog.get_logger("memoryd")


class DataDirLocked(RuntimeError):
    pass


def _lock_data_dir(data_dir: Path) -> IO[bytes]:
    """One daemon per data dir: LanceDB tables must have a single writer."""
    data_dir.mkdir(parents=True, exist_ok=True)
    handle = open(data_dir / ".lock", "wb")  # noqa: SIM115 - held for the daemon's lifetime
    try:
        fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        raise DataDirLocked(f"another memoryd is using {data_dir}") from None
    return handle


class App:
    def __init__(self, settings: Settings) -> None:
        self.settings = settings
        self._stack = AsyncExitStack()
        self.server: GrpcServer | None = None

    @property
    def address(self) -> str:
        assert self.server is not None, "not started"
        return self.server.address

    async def start(self) -> None:
        s = self.settings
        data_dir = s.data_dir.absolute()
        lock = _lock_data_dir(data_dir)
        self._stack.callback(lock.close)

        embedder = await asyncio.to_thread(build_embedder, s.embedder, s.embedding)
        self._stack.push_async_callback(embedder.close)

        store = build_store(s.storage.backend, data_dir=data_dir, dimension=embedder.dimension)
        await store.open()
        self._stack.push_async_callback(store.close)

        writer = WriteBatcher(store, max_batch=s.storage.write_batch_max)
        writer.start()
        self._stack.push_async_callback(writer.close)

        access = AccessStatsBuffer(
            store,
            interval_s=s.storage.access_flush_interval_s,
            max_pending=s.storage.access_flush_max_pending,
        )
        access.start()
        self._stack.push_async_callback(access.close)

        page_tokens = (
            PageTokenCodec(s.page_token_secret.get_secret_value().encode())
            if s.page_token_secret
            else PageTokenCodec.from_data_dir(data_dir)
        )
        service = MemoryService(
            store=store,
            embedder=embedder,
            writer=writer,
            access=access,
            page_tokens=page_tokens,
            limits=s.limits,
            recall=s.recall,
        )
        self.server = await start_server(
            listen=s.listen,
            service=service,
            authenticator=SidecarAuthenticator(s.sidecar),
            max_message_bytes=s.limits.max_request_bytes,
        )
        self._stack.push_async_callback(self.server.stop, s.shutdown_grace_s)
        await self.server.set_serving(True)
        log.info(
            "serving",
            address=self.server.address,
            store=store.name,
            embedder=embedder.model_id,
            dimension=embedder.dimension,
            data_dir=str(data_dir),
            pid=os.getpid(),
        )

    async def stop(self) -> None:
        if self.server is not None:
            await self.server.set_serving(False)
        await self._stack.aclose()
        log.info("stopped")


async def serve(settings: Settings, *, ready_file: Path | None = None) -> None:
    """Run until SIGTERM or SIGINT, then shut down gracefully."""
    app = App(settings)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        await app.start()
        if ready_file is not None:
            tmp = ready_file.with_suffix(".tmp")
            tmp.write_text(app.address)
            tmp.replace(ready_file)  # atomic: readers never see a partial address
        await stop.wait()
        log.info("shutting down", grace_s=settings.shutdown_grace_s)
    finally:
        with contextlib.suppress(Exception):
            await app.stop()
