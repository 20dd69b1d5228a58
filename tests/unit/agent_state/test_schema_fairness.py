"""Fair schema work (issue 30, item 6): each tenant's schema CPU is budgeted, so an
attacker tenant runs out while a victim tenant is served; turns go to the tenant that
used least, and the last free one only to a tenant whose evaluations are light; a
tenant's own queue is bounded; a shutdown stops what runs and waits; unbounded schemas
are refused naming where they recurse.

No wall-clock time and no real CPU measurement: wall time is a frozen clock the tests
advance, and CPU is a counter. In the service tests schemas are evaluated by the real
code in threads (ThreadEvaluator) and every read of the "CPU clock" (one per 64 Python
calls, see schema_work.within_budget) counts a millisecond, so an evaluation costs the
work it does; in the runner tests a scripted evaluator says what each job cost and
finishes when the test lets it.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from memoryd.config import LimitsSettings, WorkingMemorySettings
from memoryd.domain.agent_state import WorkingMemoryWrite, WorkingScope
from memoryd.domain.errors import InvalidArgument, ResourceExhausted, Unavailable
from memoryd.domain.json_text import Json, JsonTextError
from memoryd.domain.limits import MAX_JSON_DEPTH
from memoryd.service.agent_state.schema_bounds import MAX_SCHEMA_DEPTH
from memoryd.service.agent_state.schema_evaluators import ThreadEvaluator
from memoryd.service.agent_state.schema_runner import SchemaRunner
from memoryd.service.agent_state.schema_work import SHUTDOWN, Evaluated, Job
from memoryd.service.agent_state.working import WorkingMemoryService
from memoryd.service.common.pagination import PageTokenCodec
from memoryd.storage.memory_records import InMemoryRecordStore
from tests.clock import CountingCpu
from tests.unit.service.helpers import scope_for

ATTACKER = scope_for("a1", tenant="mallory")
VICTIM = scope_for("a1", tenant="acme")
SCOPE = WorkingScope("t1", "")
#: jsonschema compares every pair of items in Python: hundreds of CPU "milliseconds".
EXPENSIVE = {"properties": {"items": {"type": "array", "uniqueItems": True}}}
EXPENSIVE_CONTENT = {"items": [{"n": i} for i in range(50)]}
CHEAP = {"type": "object", "properties": {"step": {"type": "integer"}}}


class WallClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class Scripted:
    """An evaluator whose jobs cost what their schema's "cost" says (seconds of CPU)
    and finish when released (``release``); it records the order jobs started in."""

    def __init__(self) -> None:
        self.started: list[str] = []
        self._gates: dict[str, asyncio.Event] = {}
        self.closed = asyncio.Event()

    def release(self, name: str) -> None:
        self._gates.setdefault(name, asyncio.Event()).set()

    async def evaluate(self, job: Job, allowance_s: float) -> Evaluated:
        name = str(job.schema["name"])
        self.started.append(name)
        if job.schema.get("hold"):
            gate = self._gates.setdefault(name, asyncio.Event())
            waiting = [
                asyncio.ensure_future(gate.wait()),
                asyncio.ensure_future(self.closed.wait()),
            ]
            await asyncio.wait(waiting, return_when=asyncio.FIRST_COMPLETED)
            for w in waiting:
                w.cancel()
            if self.closed.is_set():
                return Evaluated(0.0, stopped=SHUTDOWN)
        return Evaluated(float(job.schema.get("cost", 0.0)), [])

    def close(self) -> None:
        self.closed.set()


def settings(**overrides: Any) -> WorkingMemorySettings:
    values: dict[str, Any] = {
        "schema_time_budget_ms": 2000,
        "schema_cpu_ms_per_s": 100,
        "schema_cpu_burst_ms": 2000,
        **overrides,
    }
    return WorkingMemorySettings(**values)


def job(name: str, cost: float = 0.0, hold: bool = False) -> Job:
    return Job({"name": name, "cost": cost, "hold": hold})


async def settle() -> None:
    """Let every ready task run to its next wait."""
    for _ in range(20):
        await asyncio.sleep(0)


@pytest.fixture
def wall() -> WallClock:
    return WallClock()


@pytest.fixture
async def service(wall: WallClock) -> Any:
    records = InMemoryRecordStore()
    await records.open()
    s = settings()
    runner = SchemaRunner(
        s, evaluator=ThreadEvaluator(cpu_clock=CountingCpu(per_read_s=0.001)), clock=wall
    )
    yield WorkingMemoryService(
        records=records,
        page_tokens=PageTokenCodec(b"w" * 32),
        settings=s,
        limits=LimitsSettings(),
        schemas=runner,
    )
    runner.close()


def write(content: dict[str, Any], schema: dict[str, Any] | None) -> WorkingMemoryWrite:
    return WorkingMemoryWrite(
        scope=SCOPE,
        content=Json.of(content),
        json_schema=None if schema is None else Json.of(schema),
    )


async def test_an_attacker_tenant_runs_out_while_a_victim_is_served(
    service: WorkingMemoryService, wall: WallClock
) -> None:
    runner = service._schemas
    await service.set(VICTIM, write({"step": 1}, CHEAP))
    attacker_served = 0
    refused: ResourceExhausted | None = None
    for step in range(100):
        try:
            await service.set(ATTACKER, write(EXPENSIVE_CONTENT, EXPENSIVE))
            attacker_served += 1
        except ResourceExhausted as exc:
            refused = exc
            break
        await service.set(VICTIM, write({"step": step}, CHEAP))
    assert refused is not None, "the attacker was never refused"
    assert "schema_cpu_ms_per_s" in refused.message and "retry in" in refused.message
    assert attacker_served >= 3, attacker_served  # served until its budget ran out
    # The attacker's budget is spent; the victim, served all along, has most of its.
    assert runner.budgets.balance("mallory") < 0.001
    assert runner.budgets.balance("acme") > 0.5 * runner.budgets.burst
    for step in range(5):  # the victim goes on being served
        stored = await service.set(VICTIM, write({"step": step}, None))
        assert stored.content == {"step": step}
    with pytest.raises(ResourceExhausted):  # the attacker's own calls stay refused
        await service.set(ATTACKER, write(EXPENSIVE_CONTENT, None))
    wall.now += 30  # 100 ms a second refills the 2 s burst
    await service.set(ATTACKER, write({"items": [1, 2]}, None))


async def test_a_freed_turn_goes_to_the_tenant_that_used_least(wall: WallClock) -> None:
    scripted = Scripted()
    runner = SchemaRunner(settings(schema_workers=1), evaluator=scripted, clock=wall)
    await runner.run("heavy", job("heavy-before", cost=1.5))  # heavy has used 1.5 s lately
    holding = asyncio.create_task(runner.run("other", job("other", hold=True)))
    await settle()
    heavy = asyncio.create_task(runner.run("heavy", job("heavy")))  # queued first
    await settle()
    light = asyncio.create_task(runner.run("light", job("light")))
    await settle()
    scripted.release("other")
    await asyncio.gather(holding, heavy, light)
    assert scripted.started == ["heavy-before", "other", "light", "heavy"]


async def test_the_last_free_turn_is_kept_for_light_tenants(wall: WallClock) -> None:
    scripted = Scripted()
    runner = SchemaRunner(settings(schema_workers=2), evaluator=scripted, clock=wall)
    for attacker in ("evil1", "evil2"):  # each ran an evaluation of a whole check's budget
        await runner.run(attacker, job(f"{attacker}-before", cost=2.0))
    wall.now += 3600  # refilled: the budget lets them run, but they are not light
    for attacker in ("evil1", "evil2"):
        await runner.run(attacker, job(f"{attacker}-again", cost=1.0))
    first = asyncio.create_task(runner.run("evil1", job("evil1", hold=True)))
    await settle()
    second = asyncio.create_task(runner.run("evil2", job("evil2", hold=True)))
    await settle()
    assert scripted.started[-1] == "evil1", "evil2 may not take the last worker"
    assert await runner.run("victim", job("victim")) == []  # the last worker is free for it
    scripted.release("evil1")
    await settle()
    assert scripted.started[-1] == "evil2"  # two free again: evil2 goes
    scripted.release("evil2")
    await asyncio.gather(first, second)


async def test_a_tenant_waits_in_its_own_bounded_queue_not_in_others(wall: WallClock) -> None:
    scripted = Scripted()
    runner = SchemaRunner(settings(schema_max_waiting=2), evaluator=scripted, clock=wall)
    busy = [asyncio.create_task(runner.run("mallory", job("m", hold=True))) for _ in range(3)]
    await settle()
    with pytest.raises(ResourceExhausted, match="schema_max_waiting"):
        await runner.run("mallory", job("m4"))
    # One of mallory's runs and two wait: acme is served by the other worker at once.
    assert await runner.run("acme", job("acme")) == []
    scripted.release("m")
    assert await asyncio.gather(*busy) == [[], [], []]


async def test_close_stops_what_runs_and_refuses_what_waits(wall: WallClock) -> None:
    scripted = Scripted()
    runner = SchemaRunner(settings(schema_workers=1), evaluator=scripted, clock=wall)
    running = asyncio.create_task(runner.run("t", job("t", hold=True)))
    await settle()
    waiting = asyncio.create_task(runner.run("u", job("u")))
    await settle()
    runner.close()
    for task in (running, waiting):
        with pytest.raises(Unavailable, match="shutting down"):
            await task
    with pytest.raises(Unavailable):
        await runner.run("t", job("too late"))


async def test_a_thread_evaluation_is_stopped_by_close() -> None:
    """ThreadEvaluator (the in-process host) stops a running evaluation at close."""
    evaluator = ThreadEvaluator(workers=1)
    defs = {f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}] * 2} for i in range(40)}
    endless = Job({"$defs": {**defs, "a40": {"type": "string"}}, "$ref": "#/$defs/a0"}, {"x": 1})
    running = asyncio.ensure_future(evaluator.evaluate(endless, allowance_s=3600))
    await asyncio.sleep(0)  # handed to the thread (2^40 branches: it runs until stopped)
    evaluator.close()
    assert (await asyncio.wait_for(running, 60)).stopped == SHUTDOWN  # a deadlock guard


@pytest.mark.parametrize(
    ("schema", "field"),
    [
        ({"$ref": "#"}, "json_schema.$ref"),
        ({"allOf": [{"$ref": "#"}]}, "json_schema.allOf[0].$ref"),
        ({"not": {"$ref": "#"}}, "json_schema.not.$ref"),
        (
            {"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"$ref": "#/$defs/a"}}},
            "json_schema.$defs.a.anyOf[0].$ref | json_schema.$defs.b.$ref",  # either, on it
        ),
        ({"properties": {"x": {"$ref": "#/properties/x"}}}, "json_schema.properties.x.$ref"),
    ],
)
async def test_a_reference_cycle_is_refused_naming_it(
    service: WorkingMemoryService, schema: dict[str, Any], field: str
) -> None:
    with pytest.raises(InvalidArgument) as refused:
        await service.set(VICTIM, write({"x": 1}, schema))
    (violation,) = refused.value.violations
    assert violation.field in field.split(" | ") and "cycle" in violation.description


async def test_a_cycle_through_anchors_is_refused_too(service: WorkingMemoryService) -> None:
    """Out of the static check's sight: the runner answers the recursion."""
    schema = {"$defs": {"a": {"$anchor": "x", "allOf": [{"$ref": "#x"}]}}, "$ref": "#x"}
    with pytest.raises(InvalidArgument) as refused:
        await service.set(VICTIM, write({"x": 1}, schema))
    assert [v.field for v in refused.value.violations] == ["json_schema"]
    assert "recurses" in refused.value.violations[0].description


async def test_a_schema_nested_past_the_limit_is_refused() -> None:
    """Refused where JSON enters (domain/json_text.py, MAX_JSON_DEPTH), before any
    schema work: a nesting the schema checker would have to follow never reaches it."""
    schema: dict[str, Any] = {}
    for _ in range(200):
        schema = {"not": schema}
    assert MAX_JSON_DEPTH < MAX_SCHEMA_DEPTH
    with pytest.raises(JsonTextError, match="nested deeper"):
        write({"x": 1}, schema)


async def test_a_recursive_schema_that_descends_into_the_content_is_fine(
    service: WorkingMemoryService,
) -> None:
    tree = {"type": "object", "properties": {"children": {"items": {"$ref": "#"}}}}
    content = {"children": [{"children": [{"children": []}]}]}
    stored = await service.set(VICTIM, write(content, tree))
    assert stored.content == content
