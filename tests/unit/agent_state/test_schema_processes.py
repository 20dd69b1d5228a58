"""The daemon's schema worker processes (schema_evaluators.ProcessEvaluator): real
processes running schema_work.py, started on first use, answering over their pipes,
stopped at their CPU allowance, replaced when they die, killed at close."""

from __future__ import annotations

import asyncio
import os
import signal

import pytest

from memoryd.service.agent_state.schema_evaluators import ProcessEvaluator
from memoryd.service.agent_state.schema_work import BUDGET, RECURSION, SHUTDOWN, Job

PLAN = {"type": "object", "properties": {"step": {"type": "integer"}}, "required": ["step"]}
#: A DAG of anyOf references 40 deep over content that matches none: 2^40 branches.
EXPLOSIVE = {
    "$defs": {
        **{f"a{i}": {"anyOf": [{"$ref": f"#/$defs/a{i + 1}"}] * 2} for i in range(40)},
        "a40": {"type": "string"},
    },
    "$ref": "#/$defs/a0",
}


@pytest.fixture
async def evaluator() -> ProcessEvaluator:
    pool = ProcessEvaluator(workers=2)
    yield pool  # type: ignore[misc]
    pool.close()


async def test_a_worker_starts_on_first_use_and_answers(evaluator: ProcessEvaluator) -> None:
    assert evaluator.processes == 0
    fine = await evaluator.evaluate(Job(PLAN, {"step": 1}, check=True), allowance_s=5)
    assert (fine.stopped, fine.problems) == ("", [])
    wrong = await evaluator.evaluate(Job(PLAN, {"step": "one"}), allowance_s=5)
    assert [f for f, _ in wrong.problems] == ["content.$.step"]
    bad_schema = await evaluator.evaluate(Job({"type": 5}, {}, check=True), allowance_s=5)
    assert [f for f, _ in bad_schema.problems] == ["json_schema"]
    assert evaluator.processes == 1  # one job at a time: one worker did all three
    assert fine.cpu_s > 0


async def test_work_past_the_allowance_is_stopped_and_counted(evaluator: ProcessEvaluator) -> None:
    stopped = await evaluator.evaluate(Job(EXPLOSIVE, {"x": 1}), allowance_s=0.05)
    assert stopped.stopped == BUDGET and stopped.cpu_s >= 0.05
    again = await evaluator.evaluate(Job(PLAN, {"step": 2}), allowance_s=5)
    assert again.stopped == "" and evaluator.processes == 1  # the worker goes on


async def test_endless_recursion_is_answered(evaluator: ProcessEvaluator) -> None:
    schema = {"$defs": {"a": {"$anchor": "x", "allOf": [{"$ref": "#x"}]}}, "$ref": "#x"}
    assert (await evaluator.evaluate(Job(schema, {"x": 1}), allowance_s=5)).stopped == RECURSION


async def test_a_dead_worker_is_replaced(evaluator: ProcessEvaluator) -> None:
    await evaluator.evaluate(Job(PLAN, {"step": 1}), allowance_s=5)
    (worker,) = evaluator._idle
    os.kill(worker.process.pid, signal.SIGKILL)
    worker.process.wait()
    answered = await evaluator.evaluate(Job(PLAN, {"step": 1}), allowance_s=5)
    assert answered.stopped == "" and evaluator.processes == 1
    assert evaluator._idle[0] is not worker


async def test_close_kills_what_runs_and_refuses_what_comes() -> None:
    evaluator = ProcessEvaluator(workers=1)
    running = asyncio.ensure_future(evaluator.evaluate(Job(EXPLOSIVE, {"x": 1}), 3600))
    await asyncio.sleep(0)  # the job is sent: its worker runs it
    (worker,) = evaluator._started
    evaluator.close()
    assert (await asyncio.wait_for(running, 60)).stopped == SHUTDOWN  # a deadlock guard
    assert worker.process.returncode == -signal.SIGKILL
    assert (await evaluator.evaluate(Job(PLAN, {"step": 1}), 5)).stopped == SHUTDOWN


async def test_workers_run_below_the_daemons_priority() -> None:
    evaluator = ProcessEvaluator(workers=1, niceness=7)
    try:
        await evaluator.evaluate(Job(PLAN, {"step": 1}), allowance_s=5)
        (worker,) = evaluator._started
        ours = os.getpriority(os.PRIO_PROCESS, 0)
        assert os.getpriority(os.PRIO_PROCESS, worker.process.pid) == min(19, ours + 7)
    finally:
        evaluator.close()
