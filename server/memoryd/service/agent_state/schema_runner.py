"""Running client JSON Schemas fairly: out of the daemon's process, within a CPU budget
per check and per tenant, and stopped at shutdown.

- **Out of process**: evaluations run in worker processes (schema_evaluators.py):
  CPU-bound validation in a thread would hold the GIL the event loop needs.
- **Per check**: an evaluation stops once it has used ``schema_time_budget_ms`` of
  CPU (INVALID_ARGUMENT: the schema is too expensive to run at all).
- **Per tenant**: each tenant's schema CPU is a token bucket (``schema_cpu_ms_per_s``
  refilled continuously, up to ``schema_cpu_burst_ms``) charged with the CPU every
  evaluation used. A tenant whose bucket is empty is refused before it queues
  (RESOURCE_EXHAUSTED, saying when to retry), and an evaluation stops once it has
  spent what its tenant had left: however expensive one tenant's schemas, the CPU
  they take is bounded by its rate.
- **Fair turns**: ``schema_workers`` evaluations at once, one per tenant; a tenant's
  further calls wait in its own queue (at most ``schema_max_waiting``; more are
  refused); a freed turn goes to the waiting tenant with the most budget left (the
  one that used least lately), and the last free turn only to a *light* tenant, one
  whose last evaluation used at most a tenth of a check's budget: tenants running
  expensive schemas never hold every worker (for as long as an evaluation takes on a
  busy machine) while a cheap check of another tenant waits.
- **Shutdown**: :meth:`SchemaRunner.close` refuses what waits and stops what runs
  (UNAVAILABLE), so a SIGTERM is not held up by schema work.

Wall time comes from an injected clock, CPU from the evaluator (tests count it).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from dataclasses import dataclass
from functools import partial

from memoryd.config import WorkingMemorySettings
from memoryd.domain.errors import InvalidArgument, ResourceExhausted, Unavailable
from memoryd.service.agent_state.schema_evaluators import Evaluator, ProcessEvaluator
from memoryd.service.agent_state.schema_work import (
    BUDGET,
    FAILED,
    RECURSION,
    SHUTDOWN,
    Clock,
    Evaluated,
    Job,
)

#: A tenant with less schema CPU left than this is refused rather than started.
MIN_TO_START_S = 0.001
#: A tenant whose last evaluation used at most this share of a check's budget is
#: light: it may take the last free worker.
LIGHT_SHARE = 0.1


def over_budget(budget_s: float) -> InvalidArgument:
    return InvalidArgument.field(
        "json_schema",
        f"took more than {budget_s * 1000:.0f} ms of CPU to evaluate "
        "(working_memory.schema_time_budget_ms): simplify it",
    )


@dataclass(slots=True)
class _Bucket:
    balance: float
    at: float
    #: CPU the tenant's last evaluation used.
    last_cost: float = 0.0


class CpuBudgets:
    """Each tenant's schema CPU as a token bucket, in seconds of CPU; a tenant whose
    bucket is full is not kept."""

    def __init__(self, rate: float, burst: float, clock: Clock) -> None:
        self.rate, self.burst = rate, burst
        self._clock = clock
        self._buckets: dict[str, _Bucket] = {}

    def balance(self, tenant: str) -> float:
        """What ``tenant`` may spend now (negative: a debt to work off first)."""
        bucket = self._buckets.get(tenant)
        if bucket is None:
            return self.burst
        now = self._clock()
        balance = min(self.burst, bucket.balance + (now - bucket.at) * self.rate)
        if balance >= self.burst:
            del self._buckets[tenant]
        else:
            bucket.balance, bucket.at = balance, now
        return balance

    def charge(self, tenant: str, cpu_s: float) -> None:
        self._buckets[tenant] = _Bucket(self.balance(tenant) - cpu_s, self._clock(), cpu_s)

    def last_cost(self, tenant: str) -> float:
        """CPU of the tenant's last evaluation (0 once its bucket refilled: forgotten)."""
        self.balance(tenant)  # forgets a full bucket
        bucket = self._buckets.get(tenant)
        return 0.0 if bucket is None else bucket.last_cost

    def refilled_in(self, tenant: str, needed: float) -> float:
        """Seconds until ``tenant`` has ``needed`` again."""
        return max(0.0, needed - self.balance(tenant)) / self.rate


class _Turns:
    """Who evaluates next (see the module docstring): at most ``workers`` at once, one
    per tenant, the last free turn kept for light tenants (a last evaluation of at
    most ``light`` CPU)."""

    def __init__(self, workers: int, budgets: CpuBudgets, max_waiting: int, light: float) -> None:
        self._workers = workers
        self._light = light
        self._free = workers
        self._budgets = budgets
        self._max_waiting = max_waiting
        self._running: set[str] = set()
        self._waiting: dict[str, deque[asyncio.Future[None]]] = {}

    async def acquire(self, tenant: str) -> None:
        if tenant not in self._waiting and self._may_take(tenant):
            self._take(tenant)
            return
        queue = self._waiting.setdefault(tenant, deque())
        if len(queue) >= self._max_waiting:
            raise ResourceExhausted(
                f"{len(queue)} schema checks of this tenant are already waiting "
                "(working_memory.schema_max_waiting); retry later"
            )
        turn = asyncio.get_running_loop().create_future()
        queue.append(turn)
        try:
            await turn
        except asyncio.CancelledError:
            if turn.done() and not turn.cancelled():
                self.release(tenant)  # granted as the caller gave up
            else:
                self._forget(tenant, turn)
            raise

    def release(self, tenant: str) -> None:
        self._running.discard(tenant)
        self._free += 1
        self._grant()

    def close(self, error: Exception) -> None:
        """Fail every waiting call with ``error``."""
        waiting, self._waiting = self._waiting, {}
        for queue in waiting.values():
            for turn in queue:
                if not turn.done():
                    turn.set_exception(error)

    def _may_take(self, tenant: str) -> bool:
        if tenant in self._running or not self._free:
            return False
        if self._free > 1 or self._workers == 1:
            return True
        return self._budgets.last_cost(tenant) <= self._light

    def _take(self, tenant: str) -> None:
        self._running.add(tenant)
        self._free -= 1

    def _forget(self, tenant: str, turn: asyncio.Future[None]) -> None:
        queue = self._waiting.get(tenant)
        if queue is not None and turn in queue:
            queue.remove(turn)
            if not queue:
                del self._waiting[tenant]

    def _grant(self) -> None:
        while self._free:
            eligible = [t for t in self._waiting if t not in self._running]
            if not eligible:
                return
            # The most budget left first (ties: the tenant that queued first); when
            # even it may not take the last turn, no one may.
            tenant = max(eligible, key=self._budgets.balance)
            if not self._may_take(tenant):
                return
            queue = self._waiting[tenant]
            turn = queue.popleft()
            if not queue:
                del self._waiting[tenant]
            self._take(tenant)
            turn.set_result(None)


class SchemaRunner:
    """Schema checks and validations, fairly between tenants (see the module
    docstring)."""

    def __init__(
        self,
        settings: WorkingMemorySettings,
        *,
        evaluator: Evaluator | None = None,
        clock: Clock = time.monotonic,
    ) -> None:
        self.budget_s = settings.schema_time_budget_ms / 1000
        self.budgets = CpuBudgets(
            settings.schema_cpu_ms_per_s / 1000, settings.schema_cpu_burst_ms / 1000, clock
        )
        workers = settings.schema_workers
        self._evaluator = evaluator or ProcessEvaluator(
            workers, niceness=settings.schema_worker_niceness
        )
        light = LIGHT_SHARE * self.budget_s
        self._turns = _Turns(workers, self.budgets, settings.schema_max_waiting, light)
        self._closed = False

    async def run(self, tenant_id: str, job: Job) -> list[tuple[str, str]]:
        """The (field, description) problems of ``job``: INVALID_ARGUMENT past the
        check's budget, RESOURCE_EXHAUSTED past the tenant's, UNAVAILABLE once closed."""
        self._admit(tenant_id)
        await self._turns.acquire(tenant_id)
        try:
            self._admit(tenant_id)  # the budget may have gone while it waited
        except BaseException:
            self._turns.release(tenant_id)
            raise
        allowance = min(self.budget_s, self.budgets.balance(tenant_id))
        done = asyncio.ensure_future(self._evaluator.evaluate(job, allowance))
        # Charged and released when the evaluation ends, even if its caller stopped
        # waiting (registered first: it runs before the caller resumes).
        done.add_done_callback(partial(self._finished, tenant_id))
        evaluated = await asyncio.shield(done)
        return self._outcome(tenant_id, evaluated, allowance)

    def close(self) -> None:
        """Refuse what waits and stop what runs (UNAVAILABLE)."""
        self._closed = True
        self._turns.close(_shutting_down())
        self._evaluator.close()

    def _admit(self, tenant_id: str) -> None:
        if self._closed:
            raise _shutting_down()
        if self.budgets.balance(tenant_id) < MIN_TO_START_S:
            raise self._exhausted(tenant_id)

    def _exhausted(self, tenant_id: str) -> ResourceExhausted:
        retry = self.budgets.refilled_in(tenant_id, MIN_TO_START_S)
        return ResourceExhausted(
            "this tenant's schema validation CPU is used up "
            f"(working_memory.schema_cpu_ms_per_s); retry in {max(retry, 0.1):.1f} s"
        )

    def _finished(self, tenant_id: str, done: asyncio.Future[Evaluated]) -> None:
        if not done.cancelled() and done.exception() is None:
            self.budgets.charge(tenant_id, done.result().cpu_s)
        self._turns.release(tenant_id)

    def _outcome(
        self, tenant_id: str, evaluated: Evaluated, allowance: float
    ) -> list[tuple[str, str]]:
        stopped = evaluated.stopped
        if not stopped:
            return evaluated.problems
        if stopped == BUDGET:
            if allowance < self.budget_s:  # stopped at what the tenant had left
                raise self._exhausted(tenant_id)
            raise over_budget(self.budget_s)
        if stopped == SHUTDOWN:
            raise _shutting_down()
        if stopped == RECURSION:
            raise InvalidArgument.field(
                "json_schema",
                "recurses without end: a $ref cycle that does not descend into the "
                "content, or content nested deeper than the schema can follow",
            )
        assert stopped == FAILED, stopped
        raise InvalidArgument.field("json_schema", "could not be evaluated: simplify it")


def _shutting_down() -> Unavailable:
    return Unavailable("the daemon is shutting down; schema checks are not run (retry)")
