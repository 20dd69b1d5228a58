"""WriteThrough: the facades' core in front of a store other replicas share.

The rule there is that an acknowledgement means the store has the write: nothing is
logged on the replica (its disk may be an emptyDir that dies with the pod, and a
versioned or conditional write cannot be replayed later over other replicas' writes
anyway). Each write is applied at once, in the caller's order; when the store cannot
take it the caller gets UNAVAILABLE and nothing is retried behind its back. Reads
keep the facades' behaviour: a store that fails a read answers what it can, the call
is told it was served degraded, and the ``store`` component is NOT_SERVING until a
write or a probe succeeds. Every write is tried (no circuit breaker): a distributed
store may refuse writes to one shard and take them for all others.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any, TypeVar

import structlog

from memoryd.aio import cancel_and_wait
from memoryd.domain.errors import MemorydError, StoreError, Unavailable
from memoryd.domain.models import Partition
from memoryd.domain.records import Record
from memoryd.durability.ops import Op, apply
from memoryd.resilience.degradation import ComponentStates, report
from memoryd.security.admission import current, made_durable
from memoryd.storage.base import Store
from memoryd.storage.conditional import ConditionalWrite
from memoryd.storage.failures import cause_of, public_reason
from memoryd.storage.records import RecordStore

log = structlog.get_logger(__name__)

STORE = "store"
_T = TypeVar("_T")


class WriteThrough:
    """Writes applied before they are answered; failures refused, never buffered."""

    def __init__(
        self,
        store: Store,
        records: RecordStore,
        *,
        states: ComponentStates,
        retry_max_s: float = 5.0,
        reopen: Callable[[], Awaitable[None]] | None = None,
    ) -> None:
        self.store = store
        self.records = records
        self.states = states
        self.retry_max_s = retry_max_s
        self._reopen = reopen
        self._opened = True
        self._open_error = ""
        self._probe: asyncio.Task[None] | None = None
        self._closed = False

    async def open(self, open_error: str | None = None) -> None:
        """``open_error``: why the store did not open at start (a passing cause). The
        replica then serves degraded, refuses writes, and opens the store in the
        background (``reopen``) like the probe after a failure."""
        if open_error is None:
            self.states.set(STORE, ok=True)
            return
        self._opened = False
        self._open_error = open_error
        self.states.set(STORE, ok=False, reason=f"{open_error}; retrying in the background")
        self._schedule_probe()

    async def close(self) -> None:
        self._closed = True
        await cancel_and_wait(self._probe)

    async def shred_log(self) -> int:
        """No log: nothing to drop."""
        return 0

    # -- writes ----------------------------------------------------------------------

    async def write(self, op: Op) -> None:
        """Apply ``op``; UNAVAILABLE when the store cannot take it (inside a
        ``transaction()`` too: there is no log entry to group writes into)."""
        await self.commit([op])

    async def commit(self, ops: list[Op]) -> None:
        for op in ops:
            await self._guarded(apply(op, self.store, self.records))

    async def put_record_if(
        self, partition: Partition, record: Record, expected: Record | None
    ) -> bool:
        """The store's own conditional write: it decides among every replica."""
        return await self._guarded(self.records.put_record_if(partition, record, expected))

    async def upsert_if(self, write: ConditionalWrite) -> list[str]:
        """The store's own conditional write of memories, decided among every replica."""
        return await self._guarded(self.store.upsert_if(write))

    async def _guarded(self, call: Coroutine[Any, Any, _T]) -> _T:
        if self._closed:
            call.close()
            raise Unavailable("the server is shutting down; write not accepted")
        if not self._opened:
            call.close()
            state = self.states.get(STORE)
            raise Unavailable(
                f"{state.reason if state else 'store unavailable'}; write not accepted"
            )
        try:
            # The calls' STARTED events first (fsynced beside their reads): no write
            # runs before its event is on disk (security/admission.py).
            await made_durable(current())
        except BaseException:
            call.close()
            raise
        try:
            result = await call
        except (MemorydError, ValueError, TypeError) as exc:
            if isinstance(exc, Unavailable | StoreError):
                raise self._failed(exc) from exc
            raise  # bad input, not the store failing: the caller hears it as it is
        except Exception as exc:
            raise self._failed(exc) from exc
        self._succeeded()
        return result

    def _failed(self, exc: Exception) -> Unavailable:
        reason = public_reason(exc)
        self.states.set(STORE, ok=False, reason=f"store unavailable ({reason})")
        log.warning("store write failed; refused, nothing buffered", error=str(exc))
        self._schedule_probe()
        return Unavailable(
            f"store unavailable ({reason}); the write may not have been stored: read "
            "before retrying a conditional write"
        )

    def _succeeded(self) -> None:
        state = self.states.get(STORE)
        if state is not None and not state.ok:
            self.states.set(STORE, ok=True)

    # -- reads (the facades) -----------------------------------------------------------

    def pending_ops(self, partition: Partition) -> list[Op]:
        return []  # nothing is ever held back from the store

    async def caught_up(self, partition: Partition | None = None) -> None:
        return None

    async def settled(self, partition: Partition) -> None:
        """Nothing waits in a log here: a write returns once the store holds it."""
        return None

    def report_if_degraded(self) -> None:
        self.states.report_if_impaired(STORE)

    def read_error(self, exc: Exception) -> StoreError:
        """What a read the store failed raises: a clean UNAVAILABLE (the backend's own
        text is in the daemon's log)."""
        self.note_read_failure(exc)
        reason = self._open_error if not self._opened else public_reason(exc)
        reason = reason.removeprefix("store unavailable: ")
        return StoreError(f"store unavailable: {reason}; try again later", cause=cause_of(exc))

    def note_read_failure(self, exc: Exception) -> None:
        self.states.set(STORE, ok=False, reason=f"store unavailable ({public_reason(exc)})")
        report(STORE, f"store unavailable for reads ({type(exc).__name__}); partial results")
        self._schedule_probe()

    def _schedule_probe(self) -> None:
        if self._closed or (self._probe is not None and not self._probe.done()):
            return
        self._probe = asyncio.create_task(self._probe_loop(), name="store-probe")

    async def _probe_loop(self) -> None:
        delay = 0.2
        while True:
            await asyncio.sleep(delay)
            try:
                if not self._opened and self._reopen is not None:
                    await self._reopen()
                    self._opened = True
                    log.info("store opened")
                await self.store.list_partitions()
            except Exception:
                delay = min(delay * 2, self.retry_max_s)
                continue
            self._succeeded()
            log.info("store answering again")
            return
