"""One schema evaluation within a CPU allowance, and the worker process that runs them.

:func:`evaluate` checks a new schema and validates content against a schema, stopped
once it has used its allowance of its thread's CPU (a trace function looks every few
Python calls). The daemon runs it in worker processes of its own
(``python -m memoryd.service.agent_state.schema_work``, see schema_evaluators.py):
validation is CPU-bound Python, and in a thread of the daemon it would hold the GIL
the event loop needs (measured: another tenant's request p50 20x slower while one
evaluation ran). A worker reads jobs from stdin and answers on stdout, one frame
each: a 4-byte big-endian length, then JSON. It imports no settings and no service:
only jsonschema, RE2 and the schema checks; it runs at a lower priority than the
daemon (``working_memory.schema_worker_niceness``), so when the CPU is short,
requests are served first.
"""

from __future__ import annotations

import inspect
import json
import os
import struct
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from types import FrameType
from typing import Any, BinaryIO, TypeVar

from memoryd.service.agent_state.schemas import Problems, content_problems, schema_problems

T = TypeVar("T")
Clock = Callable[[], float]
FRAME = struct.Struct(">I")
#: Frames of these kinds are never where the budget stops work: a generator's frame
#: also runs when it is closed, and an exception raised there is "ignored" by the
#: finaliser (and the tracer is gone with it): the work would go on unbounded.
_RESUMABLE = inspect.CO_GENERATOR | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
#: Python calls between two looks at the thread's CPU clock (a system call each).
_CALLS_PER_LOOK = 64

#: Why an evaluation ended without an answer (Evaluated.stopped).
BUDGET, RECURSION, SHUTDOWN, FAILED = "budget", "recursion", "shutdown", "failed"


class OverBudget(Exception):
    """A schema check or validation ran past its CPU allowance."""


class Stopped(Exception):
    """The evaluation was stopped from outside (a shutdown)."""


def within_budget(
    seconds: float,
    work: Callable[[], T],
    *,
    cpu_clock: Clock = time.thread_time,
    stop: threading.Event | None = None,
) -> T:
    """Run ``work`` in this thread, stopping it (OverBudget) once it has used more than
    ``seconds`` of this thread's CPU time (Stopped once ``stop`` is set). CPU time, not
    wall time: a busy machine must not fail a schema that is cheap to evaluate."""
    deadline = cpu_clock() + seconds
    previous, previous_profile = sys.gettrace(), sys.getprofile()
    calls = 0
    stopped_by: type[Exception] | None = None

    def trace(frame: FrameType, event: str, arg: Any) -> None:
        nonlocal calls, stopped_by
        if event != "call" or frame.f_code.co_flags & _RESUMABLE:
            return None
        if stopped_by is None:
            calls += 1
            if calls % _CALLS_PER_LOOK:
                return None
            if stop is not None and stop.is_set():
                stopped_by = Stopped
            elif cpu_clock() > deadline:
                stopped_by = OverBudget
            else:
                return None
            sys.setprofile(rearm)
        raise stopped_by

    def rearm(frame: FrameType, event: str, arg: Any) -> None:
        # Raising from the trace function unsets it. Where the raise landed in a
        # finaliser or a weakref callback (the garbage collector runs them in whatever
        # thread it collects in, other tests' garbage too) the exception is "ignored"
        # and the work goes on: trace again, so that its next call raises again.
        if sys.gettrace() is None:
            sys.settrace(trace)

    sys.settrace(trace)
    try:
        result = work()
    finally:
        sys.setprofile(previous_profile)  # first: it would trace again
        sys.settrace(previous)
    if stopped_by is not None:  # raised where something caught it: not to be trusted
        raise stopped_by
    return result


@dataclass(frozen=True, slots=True)
class Job:
    """Check ``schema`` (``check``: it is new) and validate ``content`` against it
    (None: only check it)."""

    schema: dict[str, Any]
    content: dict[str, Any] | None = None
    check: bool = False

    def as_json(self, allowance_s: float) -> dict[str, Any]:
        return {
            "schema": self.schema,
            "content": self.content,
            "check": self.check,
            "allowance_s": allowance_s,
        }


@dataclass(frozen=True, slots=True)
class Evaluated:
    """An evaluation's (field, description) problems and the CPU it used; ``stopped``
    says why it ended without an answer ("" when it answered)."""

    cpu_s: float
    problems: list[tuple[str, str]] = field(default_factory=list)
    stopped: str = ""

    def as_json(self) -> dict[str, Any]:
        return {"cpu_s": self.cpu_s, "problems": self.problems, "stopped": self.stopped}

    @classmethod
    def from_json(cls, doc: dict[str, Any]) -> Evaluated:
        problems = [(str(f), str(d)) for f, d in doc.get("problems") or []]
        return cls(float(doc["cpu_s"]), problems, str(doc.get("stopped") or ""))


def _run(job: Job) -> Problems:
    if job.check:
        found = schema_problems(job.schema)
        if found:
            return found
    return content_problems(job.content, job.schema) if job.content is not None else Problems()


def evaluate(
    job: Job,
    allowance_s: float,
    *,
    cpu_clock: Clock = time.thread_time,
    stop: threading.Event | None = None,
) -> Evaluated:
    """``job`` in this thread within ``allowance_s`` of its CPU."""
    started = cpu_clock()

    def used() -> float:
        return max(0.0, cpu_clock() - started)

    try:
        found = within_budget(allowance_s, lambda: _run(job), cpu_clock=cpu_clock, stop=stop)
    except OverBudget:
        return Evaluated(used(), stopped=BUDGET)
    except Stopped:
        return Evaluated(used(), stopped=SHUTDOWN)
    except RecursionError:
        return Evaluated(used(), stopped=RECURSION)
    return Evaluated(used(), list(found))


# ---------------------------------------------------------------- the worker process


def read_frame(stream: BinaryIO) -> bytes | None:
    header = stream.read(FRAME.size)
    if len(header) < FRAME.size:
        return None
    (length,) = FRAME.unpack(header)
    return stream.read(length)


def frame(doc: dict[str, Any]) -> bytes:
    body = json.dumps(doc, ensure_ascii=False, allow_nan=False).encode()
    return FRAME.pack(len(body)) + body


def answer(body: bytes) -> Evaluated:
    """One job frame's answer (a job that cannot be read is an evaluation failure)."""
    try:
        doc = json.loads(body)
        job = Job(doc["schema"], doc.get("content"), bool(doc.get("check")))
        allowance_s = float(doc["allowance_s"])
    except RecursionError:
        return Evaluated(0.0, stopped=RECURSION)
    except (ValueError, KeyError, TypeError):
        return Evaluated(0.0, stopped=FAILED)
    return evaluate(job, allowance_s)


def serve(reader: BinaryIO, writer: BinaryIO) -> None:
    """Answer jobs until the daemon closes the pipe."""
    while (body := read_frame(reader)) is not None:
        writer.write(frame(answer(body).as_json()))
        writer.flush()


def main(argv: list[str]) -> None:
    """``schema_work.py [niceness]``: serve jobs on stdin/stdout, ``niceness`` below
    the daemon (working_memory.schema_worker_niceness)."""
    os.nice(int(argv[0]) if argv else 0)
    serve(sys.stdin.buffer, sys.stdout.buffer)


if __name__ == "__main__":
    main(sys.argv[1:])
