"""What both Qdrant stores (memories: store.py, records: records.py) do alike with
their engine: connect it and open their collections (closing it again when one cannot
be opened), close it, refuse calls while closed, and turn failures into StoreError."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable
from contextlib import AbstractAsyncContextManager

from memoryd.domain.errors import StoreError
from memoryd.storage.base import qdrant_capabilities
from memoryd.storage.failures import backend_errors
from memoryd.storage.qdrant.engine import Engine, IncompatibleCollection
from memoryd.storage.qdrant.schema import CollectionSpec


class EngineOwner:
    """A store over one Qdrant engine (a server, local mode, or Qdrant Edge)."""

    #: What the store is called in errors ("store", "record store").
    label = "store"

    def __init__(
        self, connect: Callable[[], Awaitable[Engine]], *, name: str, where: str, shared: bool
    ) -> None:
        self.name = name
        #: The endpoint, for the daemon's log.
        self.where = where
        self.capabilities = qdrant_capabilities(shared=shared)
        self._connect = connect
        self._engine: Engine | None = None
        self._write_lock = asyncio.Lock()

    def _collections(self) -> Iterable[CollectionSpec]:
        """The collections ``open`` opens (or creates)."""
        raise NotImplementedError

    def _incompatible(self, exc: IncompatibleCollection) -> str:
        """Why a collection that exists cannot be used, and what to do about it."""
        return f"the Qdrant {self.label} ({self.where}): {exc}"

    async def open(self) -> None:
        if self._engine is not None:
            return
        async with backend_errors(self.name, "open", self.where):
            engine = await self._connect()
            try:
                for spec in self._collections():
                    await engine.open_collection(spec)
            except IncompatibleCollection as exc:
                await engine.close()
                raise StoreError(self._incompatible(exc)) from exc
            except BaseException:
                await engine.close()
                raise
            self._engine = engine

    async def close(self) -> None:
        engine, self._engine = self._engine, None
        if engine is not None:
            async with backend_errors(self.name, "close"):
                await engine.close()

    def _eng(self) -> Engine:
        if self._engine is None:
            raise StoreError(f"{self.name} {self.label} is not open")
        return self._engine

    def _errors(self, op: str) -> AbstractAsyncContextManager[None]:
        return backend_errors(self.name, op)
