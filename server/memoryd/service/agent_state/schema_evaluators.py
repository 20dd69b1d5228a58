"""Where schema evaluations run: worker processes (the daemon) or threads (tests).

:class:`ProcessEvaluator` keeps up to ``workers`` processes running
``schema_work.py``, started on first use, each answering one job at a time over its
pipes (an I/O thread waits for the answer); validation there never holds the
daemon's GIL. A worker that dies or stops
answering (past a generous wall-clock backstop: the CPU allowance stops Python work,
this stops a worker wedged in C) is killed and replaced; ``close`` kills them all.
:class:`ThreadEvaluator` runs the same :func:`schema_work.evaluate` in threads of
this process with an injected CPU clock, for tests that count CPU instead of
spending it.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from functools import partial
from typing import IO, Protocol

import structlog

from memoryd.service.agent_state.schema_work import (
    FAILED,
    FRAME,
    SHUTDOWN,
    Clock,
    Evaluated,
    Job,
    evaluate,
    frame,
)

log = structlog.get_logger(__name__)

WORKER_COMMAND = (sys.executable, "-m", "memoryd.service.agent_state.schema_work")
#: Wall-clock seconds an evaluation may take beyond 20x its CPU allowance before its
#: worker is killed (a loaded machine stretches CPU time; this only catches a wedge).
BACKSTOP_S = 30.0


class Evaluator(Protocol):
    async def evaluate(self, job: Job, allowance_s: float) -> Evaluated:
        """``job`` within ``allowance_s`` of CPU; never raises for the job's sake."""

    def close(self) -> None:
        """Stop what runs (it answers ``stopped`` SHUTDOWN) and refuse what comes."""


class ThreadEvaluator:
    """In threads of this process, CPU read from ``cpu_clock`` (for tests)."""

    def __init__(self, workers: int = 2, cpu_clock: Clock = time.thread_time) -> None:
        self._pool = ThreadPoolExecutor(workers, thread_name_prefix="memoryd-schema")
        self._cpu_clock = cpu_clock
        self._stop = threading.Event()

    async def evaluate(self, job: Job, allowance_s: float) -> Evaluated:
        run = partial(evaluate, job, allowance_s, cpu_clock=self._cpu_clock, stop=self._stop)
        try:
            return await asyncio.get_running_loop().run_in_executor(self._pool, run)
        except RuntimeError:  # the pool shut down
            return Evaluated(0.0, stopped=SHUTDOWN)

    def close(self) -> None:
        self._stop.set()
        # What is queued still starts, and stops at its first look at the flag.
        self._pool.shutdown(wait=False)


class _Worker:
    """One worker process; ``ask`` blocks (it runs in an I/O thread, never on the loop)."""

    def __init__(self, command: tuple[str, ...]) -> None:
        self.process = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    @property
    def alive(self) -> bool:
        return self.process.poll() is None

    def ask(self, body: bytes) -> Evaluated:
        stdin, stdout = self.process.stdin, self.process.stdout
        assert stdin is not None and stdout is not None
        stdin.write(body)
        stdin.flush()
        (length,) = FRAME.unpack(_read(stdout, FRAME.size))
        return Evaluated.from_json(json.loads(_read(stdout, length)))

    def kill(self) -> None:
        with contextlib.suppress(OSError):
            self.process.kill()
        self.process.wait()
        for pipe in (self.process.stdin, self.process.stdout):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()


def _read(stream: IO[bytes], size: int) -> bytes:
    data = stream.read(size)
    if len(data) < size:
        raise EOFError("the schema worker closed its pipe")
    return data


class ProcessEvaluator:
    """In worker processes of their own (see the module docstring). The caller (the
    schema runner's turns) never asks for more evaluations at once than ``workers``."""

    def __init__(
        self, workers: int, niceness: int = 0, command: tuple[str, ...] = WORKER_COMMAND
    ) -> None:
        self._max = workers
        self._command = (*command, str(niceness))
        self._idle: list[_Worker] = []
        self._started: set[_Worker] = set()
        #: Threads that wait on the workers' pipes (the GIL is free while they wait).
        self._io = ThreadPoolExecutor(workers, thread_name_prefix="memoryd-schema-io")
        self._closed = False

    @property
    def processes(self) -> int:
        return len(self._started)

    async def evaluate(self, job: Job, allowance_s: float) -> Evaluated:
        if self._closed:
            return Evaluated(0.0, stopped=SHUTDOWN)
        body = frame(job.as_json(allowance_s))  # before a worker is taken: may raise
        worker = self._take()
        asked = asyncio.get_running_loop().run_in_executor(self._io, worker.ask, body)
        try:
            async with asyncio.timeout(BACKSTOP_S + 20 * allowance_s):
                answered = await asyncio.shield(asked)
        except (OSError, EOFError, ValueError, KeyError, TimeoutError) as exc:
            self._drop(worker)
            if self._closed:
                return Evaluated(0.0, stopped=SHUTDOWN)
            log.error("schema worker failed; replaced", error=f"{type(exc).__name__}: {exc}")
            return Evaluated(allowance_s, stopped=FAILED)
        except BaseException:
            self._drop(worker)  # cancelled mid-answer: its pipe is out of step
            raise
        self._idle.append(worker)
        return answered

    def close(self) -> None:
        self._closed = True
        for worker in list(self._started):
            self._drop(worker)
        self._io.shutdown(wait=False, cancel_futures=True)

    def _take(self) -> _Worker:
        while self._idle:
            worker = self._idle.pop()
            if worker.alive:
                return worker
            self._drop(worker)  # died while idle (killed from outside)
        if len(self._started) >= self._max:
            raise RuntimeError("more schema evaluations at once than workers")
        worker = _Worker(self._command)
        self._started.add(worker)
        return worker

    def _drop(self, worker: _Worker) -> None:
        """Kill it: a thread reading its pipe gets end-of-file."""
        self._started.discard(worker)
        with contextlib.suppress(ValueError):
            self._idle.remove(worker)
        worker.kill()
