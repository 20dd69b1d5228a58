"""The write path's part of the bench report (bench/write_path.py, issue 31): its
targets, and a table of every system and phase beside the floor, with the load
average each phase started at."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from report_values import get

Row = Callable[[str, str, str, bool | None], None]
PHASES = (("set1", "SetMemory", "SetMemory, 1 writer"), ("set8", "SetMemory", "SetMemory, 8 writers on 8 agents"),
          ("rem8", "Remember", "Remember (model), 8 writers on 8 new agents"))  # fmt: skip


def _ms(v: Any) -> str:
    return "n/a" if not isinstance(v, int | float) else f"{v:,.1f} ms"


def _num(v: Any) -> str:
    return "n/a" if not isinstance(v, int | float) else f"{v:,.0f}"


def targets(wp: dict[str, Any], mixed: dict[str, Any], row: Row) -> None:
    """The issue's targets for the write path (and the mixed section's, which compare
    with the idle SetMemory measured here)."""
    if not wp:
        return
    m = wp.get("memoryd") or {}
    s1 = get(m, "set1", "SetMemory") or {}
    load = get(m, "set1", "load_avg_1m")
    row("SetMemory, 1 writer", "p50 ≤ 3 ms, p99 ≤ 15 ms",
        f"p50 {_ms(s1.get('p50'))}, p99 {_ms(s1.get('p99'))} (floor p50 {_ms(get(wp, 'floor', 'set1', 'SetMemory', 'p50'))}; load {load})",
        None if s1.get("p50") is None else s1["p50"] <= 3 and s1["p99"] <= 15)  # fmt: skip
    s8 = get(m, "set8", "SetMemory") or {}
    row("SetMemory, 8 writers on 8 agents", "≥ 1,500/s, p99 ≤ 40 ms, longest ≤ 250 ms",
        f"{_num(s8.get('rps'))}/s, p99 {_ms(s8.get('p99'))}, longest {_ms(s8.get('max'))} in {get(m, 'set8', 'seconds')} s "
        f"(floor {_num(get(wp, 'floor', 'set8', 'SetMemory', 'rps'))}/s; previous {_num(get(wp, 'previous', 'set8', 'SetMemory', 'rps'))}/s; load {get(m, 'set8', 'load_avg_1m')})",
        None if s8.get("rps") is None else s8["rps"] >= 1500 and s8["p99"] <= 40 and s8["max"] <= 250)  # fmt: skip
    r8 = get(m, "rem8", "Remember") or {}
    first = m.get("first") or {}
    row("Remember (model), 8 writers", "≥ 400/s, p99 ≤ 60 ms; first write to a new agent ≤ 2x steady",
        f"{_num(r8.get('rps'))}/s, p99 {_ms(r8.get('p99'))}; first write {_ms(get(first, 'first_ms', 'p50'))} vs "
        f"{_ms(get(first, 'steady_ms', 'p50'))} = {first.get('first_over_steady_p50')}x (load {get(m, 'rem8', 'load_avg_1m')})",
        None if r8.get("rps") is None else r8["rps"] >= 400 and r8["p99"] <= 60
        and (first.get("first_over_steady_p50") or 99) <= 2)  # fmt: skip
    mixed_set = get(mixed, "mixed", "methods", "SetMemory", "p50")
    idle = s1.get("p50")
    if isinstance(mixed_set, int | float) and isinstance(idle, int | float) and idle:
        rem_p99 = get(mixed, "mixed", "methods", "Remember", "p99")
        row("Mixed load: SetMemory p50 vs idle; Remember p99", "≤ 3x; ≤ 200 ms",
            f"{_ms(mixed_set)} vs {_ms(idle)} = {mixed_set / idle:.1f}x; {_ms(rem_p99)}",
            mixed_set / idle <= 3 and isinstance(rem_p99, int | float) and rem_p99 <= 200)  # fmt: skip
    soak = wp.get("soak") or {}
    if soak:
        row("Soak at half capacity", "flat p99 and RSS",
            f"{soak.get('rate')}/s for {soak.get('seconds')} s: plot {soak.get('plot')}; "
            f"RSS {_rss_span(soak)}", None)  # fmt: skip


def _rss_span(soak: dict[str, Any]) -> str:
    rss = soak.get("rss_mb") or []
    if not rss:
        return "n/a"
    return f"{rss[0][1]:.0f} → {rss[-1][1]:.0f} MB (max {max(m for _, m in rss):.0f})"


def lines(wp: dict[str, Any]) -> list[str]:
    """The table: every system and phase, ratios against the floor and the previous
    release."""
    if not wp:
        return []
    out = [
        "",
        "## Write path (bench/write_path.py)",
        "",
        f"Go clients (bench/loadgen mixed), closed loop, every write a new text; LanceDB, embedder "
        f"{wp.get('embedder', 'e5')}, default settings, fresh data dirs; previous release = "
        f"{wp.get('previous_commit')} with embedder {wp.get('previous_embedder', 'local')} (it "
        "does not know e5: its own default model then) "
        "run from a git worktree on the same interpreter; floor = grpc.aio appending each request "
        "to a file, group-committed with fsync (bench/write_floor.py).",
        "",
        "| phase | system | writes/s | p50 | p95 | p99 | longest | CPU ms/write | errors | load avg |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for phase, method, label in PHASES:
        for system in ("floor", "previous", "memoryd"):
            stats = get(wp, system, phase, method) or {}
            if not stats and not get(wp, system, phase):
                continue
            out.append(
                f"| {label} | {system} | {_num(stats.get('rps'))} | {_ms(stats.get('p50'))} | "
                f"{_ms(stats.get('p95'))} | {_ms(stats.get('p99'))} | {_ms(stats.get('max'))} | "
                f"{get(wp, system, phase, 'cpu_ms_per_call') or '—'} | "
                f"{stats.get('errors', get(wp, system, phase, 'error'))} | {get(wp, system, phase, 'load_avg_1m')} |"
            )
    out += ["", "Ratios (memoryd ÷ other): " + ", ".join(
        f"{k} {v}" for k, v in (wp.get("ratios") or {}).items())]  # fmt: skip
    for system in ("previous", "memoryd"):
        first = get(wp, system, "first")
        if first:
            out.append(
                f"- {system}: first Remember to a new agent p50 {_ms(get(first, 'first_ms', 'p50'))}, "
                f"the next ones {_ms(get(first, 'steady_ms', 'p50'))} ({first.get('first_over_steady_p50')}x)"
            )
    soak = wp.get("soak")
    if soak:
        out += ["", f"Soak: {soak.get('rate')} writes/s (SetMemory and Remember) for {soak.get('seconds')} s; "
                f"RSS {_rss_span(soak)}.", ""]  # fmt: skip
        if str(soak.get("plot", "")).endswith(".png"):
            out.append(f"![soak: p99 per 10 s window and RSS]({soak['plot']})")
        else:
            out.append(str(soak.get("plot")))
    if get(wp, "previous", "skipped"):
        out.append(f"- previous release skipped: {wp['previous']['skipped']}")
    return out
