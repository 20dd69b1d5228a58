"""When the LanceDB store folds new writes into its indexes (indexing.py): after
enough rows, after enough commits (a trickle of single writes piles up fragments),
or after a pause; never twice at a time."""

from __future__ import annotations

import asyncio

from memoryd.storage.lancedb.indexing import IndexRefresher


class Optimizer:
    def __init__(self) -> None:
        self.runs = 0
        self.release = asyncio.Event()
        self.release.set()

    async def __call__(self) -> None:
        self.runs += 1
        await self.release.wait()


async def _settle() -> None:
    for _ in range(5):
        await asyncio.sleep(0)


async def test_enough_rows_start_a_run() -> None:
    opt = Optimizer()
    refresher = IndexRefresher(opt, rows=100, idle_s=0, commits=10**6)
    refresher.wrote(60)
    await _settle()
    assert opt.runs == 0
    refresher.wrote(40)
    await _settle()
    assert opt.runs == 1 and refresher.unindexed == 0 and refresher.commits == 0
    await refresher.close()


async def test_enough_commits_start_a_run_however_few_rows() -> None:
    opt = Optimizer()
    refresher = IndexRefresher(opt, rows=10**9, idle_s=0, commits=3)
    refresher.wrote(1)
    refresher.wrote(0)  # a delete: a commit without rows
    await _settle()
    assert opt.runs == 0
    refresher.wrote(1)
    await _settle()
    assert opt.runs == 1
    await refresher.close()


async def test_a_pause_after_any_commit_starts_a_run() -> None:
    opt = Optimizer()
    refresher = IndexRefresher(opt, rows=10**9, idle_s=0.01, commits=10**6)
    refresher.wrote(0)
    await asyncio.sleep(0.1)
    assert opt.runs == 1
    await asyncio.sleep(0.1)
    assert opt.runs == 1  # nothing new: no second run
    await refresher.close()


async def test_never_two_runs_at_once_and_later_commits_are_picked_up() -> None:
    opt = Optimizer()
    opt.release.clear()
    refresher = IndexRefresher(opt, rows=10**9, idle_s=0.01, commits=2)
    refresher.wrote(1)
    refresher.wrote(1)
    await _settle()
    assert opt.runs == 1
    for _ in range(4):  # past the commit limit while the run is still going
        refresher.wrote(1)
    await _settle()
    assert opt.runs == 1
    opt.release.set()
    await asyncio.sleep(0.1)
    assert opt.runs == 2
    await refresher.close()
