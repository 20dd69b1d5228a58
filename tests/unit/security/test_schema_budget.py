"""within_budget: a client schema's evaluation stops once it used its CPU budget."""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator

import pytest

from memoryd.service.agent_state.schema_work import (
    _CALLS_PER_LOOK,
    OverBudget,
    Stopped,
    within_budget,
)
from memoryd.service.agent_state.schemas import content_problems


def _step(n: int) -> int:
    return n + 1


def _spin(calls: int) -> int:
    """``calls`` Python calls: work the budget can see."""
    n = 0
    for _ in range(calls):
        n = _step(n)
    return n


def test_cheap_work_is_answered() -> None:
    assert within_budget(0.25, lambda: _spin(1_000)) == 1_000


def test_work_past_the_budget_is_stopped() -> None:
    with pytest.raises(OverBudget):
        within_budget(0.02, lambda: _spin(50_000_000))


def test_the_budget_outlives_a_generator_closed_past_it() -> None:
    # A generator's frame runs again when it is closed; an exception raised there is
    # "ignored" by its finaliser and takes the tracer with it, so the spin after it
    # used to run to the end (jsonschema's all(<genexpr>) did this under uniqueItems).
    def numbers() -> Iterator[int]:
        yield 1
        yield 2

    def work() -> int:
        pending = numbers()
        next(pending)
        # Past the budget in C (no Python call to stop at), so the close meets it.
        sum(range(30_000_000))
        del pending
        return _spin(50_000_000)

    with pytest.raises(OverBudget):
        within_budget(0.02, work)


def test_swallowed_stops_still_refuse_the_result() -> None:
    def work() -> int:
        swallowed = 0
        try:  # library code with a broad except
            _spin(50_000_000)
        except OverBudget:
            swallowed += 1
        return swallowed

    with pytest.raises(OverBudget):
        within_budget(0.02, work)


class _Finalised:
    """Cyclic garbage whose finaliser makes Python calls: the collector runs it in the
    thread it collects in, and an exception raised there is "ignored"."""

    def __init__(self) -> None:
        self.cycle = self

    def __del__(self) -> None:
        _spin(4 * _CALLS_PER_LOOK)


@pytest.mark.filterwarnings("ignore::pytest.PytestUnraisableExceptionWarning")
def test_a_stop_met_in_a_finaliser_still_stops_the_work() -> None:
    # The look that sees the stop lands in a finaliser the collector runs (in the suite,
    # other tests' garbage): its raise is "ignored" there and used to take the tracer
    # with it, so the work ran on unwatched (test_a_thread_evaluation_is_stopped_by_close
    # waited for an endless evaluation). The next call of the work raises again.
    stop = threading.Event()
    stop.set()
    rounds: list[int] = []

    def work() -> int:
        for n in range(100):
            rounds.append(n)
            _Finalised()
            gc.collect()
        return len(rounds)

    with pytest.raises(Stopped):
        within_budget(3600, work, stop=stop)
    assert len(rounds) <= 2, "the work went on past the stop"


def test_unique_items_over_thousands_of_objects_is_stopped() -> None:
    schema = {"properties": {"items": {"type": "array", "uniqueItems": True}}}
    content = {"items": [{"n": float(i)} for i in range(5000)]}
    with pytest.raises(OverBudget):
        within_budget(0.05, lambda: content_problems(content, schema))


def test_time_spent_waiting_is_not_counted() -> None:
    # CPU time of the worker, not wall time: a thread that waits (as for the GIL on a
    # busy machine) past the budget without working is not stopped.
    waited = threading.Event()

    def work() -> str:
        waited.wait(0.1)
        return "ok"

    assert within_budget(0.02, work) == "ok"
