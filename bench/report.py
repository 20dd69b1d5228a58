"""The markdown report of one bench run (targets first, then the detail)."""

from __future__ import annotations

import json
from typing import Any

import keyed_latency
import qdrant_report
import qdrant_writes
import recall_throughput
import schema_fairness
import watch_feed
import write_report
from report_values import fmt, get, p50_p99, ratio_of


def targets(r: dict[str, Any]) -> list[tuple[str, str, str, bool | None]]:
    """(target, goal, measured, met) rows; met None when not measured."""
    rows: list[tuple[str, str, str, bool | None]] = []
    rec = r.get("recall") or {}
    tiers = list(rec.items())

    def row(name: str, goal: str, measured: str, ok: bool | None) -> None:
        rows.append((name, goal, measured, ok))

    t10 = rec.get("10k")
    if t10:
        p50, floor = get(t10, "vector", "p50"), t10.get("floor_p50_ms")
        ratio = ratio_of(p50, floor)
        row(
            "Recall 10k, vector: p50 vs floor",
            "≤ 1.5x floor",
            f"{fmt(p50, ' ms')} = {ratio}x floor ({fmt(floor, ' ms')})",
            None if ratio is None else ratio <= 1.5,
        )
        model = t10.get("model_single_query_p50_ms")
        text = get(t10, "text_new", "p50")
        if model is not None and text is not None:
            row(
                "Text query p50 vs the model's own time",
                "≤ model + 1.5 ms",
                f"{fmt(text, ' ms')} (model {fmt(model, ' ms')}, +{fmt(round(text - model, 3), ' ms')})",
                text <= model + 1.5,
            )
        cached = get(t10, "text_cached", "p50")
        row(
            "Text query, repeated (cache hit) p50",
            "≤ 1.5 ms",
            fmt(cached, " ms"),
            None if cached is None else cached <= 1.5,
        )
        # The first row at 32 clients: the Go client's when it ran.
        s32 = next((s for s in t10.get("sweep") or [] if s.get("clients") == 32), None)
        if s32 and "rps" in s32:
            row(
                "32 concurrent clients",
                "≥ 2000 RPS, p99 ≤ 25 ms",
                f"{fmt(s32['rps'])} RPS, p99 {fmt(s32['p99'], ' ms')} ({s32.get('client', 'python')} client)",
                s32["rps"] >= 2000 and s32["p99"] <= 25,
            )
        snap = t10.get("snapshot") or {}
        row(
            "BuildSnapshot at 10k p50 / p99",
            "(reported)",
            snap.get("status")
            if snap.get("status") != "ok"
            else f"{fmt(snap.get('p50'), ' ms')} / {fmt(snap.get('p99'), ' ms')}",
            None,
        )
    t100 = rec.get("100k")
    if t100:
        p50, rec10 = get(t100, "vector", "p50"), get(t100, "vector", "recall_at_10")
        ann = get(t100, "lancedb", "ann", "p50")
        speedup = ratio_of(ann, p50)
        ok = None if p50 is None else (p50 <= 3 and (speedup or 0) >= 3 and (rec10 or 0) >= 0.98)
        row(
            "Recall 100k in one agent",
            "p50 ≤ 3 ms, ≥ 3x LanceDB ANN, recall@10 ≥ 0.98",
            f"p50 {fmt(p50, ' ms')}, {speedup}x LanceDB ANN ({fmt(ann, ' ms')}), recall@10 {rec10}",
            ok,
        )
    for label, t in tiers:
        if t.get("agents", 1) > 1:
            p99 = get(t, "vector", "p99")
            goal = "p99 ≤ 15 ms" if t.get("memories") == 1_000_000 else "(1M target: p99 ≤ 15 ms)"
            row(
                f"Recall {label}",
                goal,
                f"p99 {fmt(p99, ' ms')} (p50 {fmt(get(t, 'vector', 'p50'), ' ms')}, recall@10 {get(t, 'vector', 'recall_at_10')})"
                + (f"; ingest-limited: {t['ingest_limited']}" if t.get("ingest_limited") else ""),
                None if p99 is None or t.get("memories") != 1_000_000 else p99 <= 15,
            )
    budgeted = get(r, "schemas", "budgeted")
    if budgeted:
        ratios = {m: get(budgeted, m, "ratio_p50") for m in ("set_working_memory", "remember")}
        row(
            "Victim p50 under two tenants' schema load",
            f"≤ {schema_fairness.TARGET_RATIO:g}x unloaded",
            f"SetWorkingMemory {ratios['set_working_memory']}x, Remember {ratios['remember']}x",
            None
            if None in ratios.values()
            else max(ratios.values()) <= schema_fairness.TARGET_RATIO,  # type: ignore[type-var]
        )
    k100 = get(r, "keyed", "100k")
    if k100:
        p50 = get(k100, "default_read_ms", "p50")
        row(
            "DefaultRead at 100k keys",
            f"p50 ≤ {keyed_latency.TARGET_P50_MS:g} ms",
            f"p50 {fmt(p50, ' ms')}, p99 {fmt(get(k100, 'default_read_ms', 'p99'), ' ms')}"
            f" ({k100.get('default_read_lines')} lines; first read {fmt(k100.get('default_read_first_ms'), ' ms')})",
            None if p50 is None else p50 <= keyed_latency.TARGET_P50_MS,
        )
    feed = r.get("watch") or {}
    if feed:
        rate, ratio = feed.get("events_per_s"), feed.get("writer_ratio")
        row(
            "Watch: changes to one watcher (catch-up)",
            f"≥ {watch_feed.TARGET_EVENTS_PER_S:,.0f}/s",
            f"{fmt(rate, '/s')} ({feed.get('catch_up_events')} changes)",
            None if rate is None else rate >= watch_feed.TARGET_EVENTS_PER_S,
        )
        row(
            f"Watch: a writer beside {feed.get('stalled_watchers')} stalled watchers",
            f"≥ {watch_feed.TARGET_WRITER_RATIO:g}x alone",
            f"{ratio}x ({feed.get('writer_beside_stalled_per_s')} vs {feed.get('writer_alone_per_s')}/s)",
            None if ratio is None else ratio >= watch_feed.TARGET_WRITER_RATIO,
        )
    w = r.get("writes") or {}
    if w:
        one, eight = w.get("batch_vectors_1_writer_per_s"), w.get("batch_vectors_8_writers_per_s")
        row(
            "RememberBatch, client vectors",
            "≥ 10,000/s",
            f"{fmt(one, '/s')} (1 writer), {fmt(eight, '/s')} (8 writers)",
            None if one is None else max(one, eight or 0) >= 10_000,
        )
        local, model_rate = w.get("batch_local_embedder_per_s"), get(r, "model", "batch_per_s")
        share = ratio_of(local, model_rate)
        measured = (
            f"{fmt(local, '/s')} = {share} of the model's {fmt(model_rate, '/s')}"
            f" (REALTALK turns, {w.get('batch_local_embedder_merged', '?')} merged)"
        )
        shares = [share]
        eight_local = w.get("batch_local_embedder_8_writers_per_s")
        if eight_local is not None:
            model_next = get(r, "model", "batch_per_s_next_turns")
            shares.append(ratio_of(eight_local, model_next))
            measured += (
                f"; 8 writers on the next turns {fmt(eight_local, '/s')} = {shares[-1]}"
                f" of the model's {fmt(model_next, '/s')}"
            )
        known = [s for s in shares if s is not None]
        row(
            "RememberBatch, local embedder",
            "≥ 90% of the model",
            measured,
            min(known) >= 0.9 if known else None,
        )
    m0 = r.get("mem0") or {}
    if "add_ms" in m0:
        ours_add = get(w, "remember_text_ms", "p50")
        ours_search = get(t10, "text_new", "p50") if t10 else None
        theirs_add, theirs_search = get(m0, "add_ms", "p50"), get(m0, "search_ms", "p50")
        fa, fs = ratio_of(theirs_add, ours_add), ratio_of(theirs_search, ours_search)
        # Both embed every text with the same model: its time is common to both and
        # bounds any ratio, so the time beyond it is compared too.
        ours_model = get(r, "model", "single_query_ms", "p50")
        theirs_model = get(m0, "model_ms", "p50")
        beyond = ""
        if None not in (ours_add, ours_search, ours_model, theirs_model):
            ba = ratio_of(theirs_add - theirs_model, ours_add - ours_model)
            bs = ratio_of(theirs_search - theirs_model, ours_search - ours_model)
            beyond = f"; beyond the model's own time: {ba}x / {bs}x"
        row(
            "vs mem0 (same embedder) p50, add / search",
            "≥ 20x faster",
            f"{fa}x / {fs}x (mem0 {fmt(theirs_add, ' ms')} / {fmt(theirs_search, ' ms')}){beyond}",
            None if fa is None or fs is None else fa >= 20 and fs >= 20,
        )
    tr = r.get("tracing") or {}
    if tr:
        ratios = [get(tr, op, "p50_ratio") for op in ("recall_vector", "remember_vector")]
        measured = " / ".join(
            f"{fmt(get(tr, op, 'on', 'p50'), ' ms')} vs {fmt(get(tr, op, 'off', 'p50'), ' ms')} = {ratio}x"
            for op, ratio in zip(("recall_vector", "remember_vector"), ratios, strict=True)
        )
        row(
            "Tracing on vs off, p50 Recall / Remember (vector)",
            "≤ 1.05x",
            measured,
            None if None in ratios else all(x <= 1.05 for x in ratios),
        )
    _mixed_targets(r.get("mixed") or {}, row)
    write_report.targets(r.get("write_path") or {}, r.get("mixed") or {}, row)
    mc = r.get("mcp") or {}
    if mc:
        adds = [get(mc, op, "mcp_adds_p50_ms") for op in ("recall", "remember")]
        measured = " / ".join(
            f"{fmt(get(mc, op, 'mcp', 'p50'), ' ms')} vs {fmt(get(mc, op, 'grpc', 'p50'), ' ms')}"
            f" (+{fmt(add, ' ms')}; CPU +{fmt(get(mc, op, 'mcp_adds_cpu_ms'), ' ms')})"
            for op, add in zip(("recall", "remember"), adds, strict=True)
        )
        row(
            "MCP tool call vs gRPC, p50 recall / remember",
            "adds ≤ 2 ms",
            measured,
            None if None in adds else all(x <= 2 for x in adds),
        )
    fp = r.get("footprint") or {}
    if fp:
        rss = get(fp, "without_model", "idle_rss_mb")
        row(
            "Idle RSS without the local model",
            "≤ 150 MB",
            fmt(rss, " MB"),
            None if rss is None else rss <= 150,
        )
        cold = get(fp, "without_model", "cold_start_s")
        cold_m = get(fp, "with_model", "cold_start_s")
        row(
            "Cold start to SERVING",
            "≤ 2 s",
            f"{fmt(cold, ' s')} without the model, {fmt(cold_m, ' s')} with it",
            None if cold is None else cold <= 2,
        )
    rows += qdrant_writes.target_rows(get(r, "qdrant", "writes"))
    rows += recall_throughput.target_rows(get(rec, "10k", "throughput"))
    return rows


def _mixed_targets(mx: dict[str, Any], row: Any) -> None:
    """The mixed section's targets (bench/mixed.py)."""
    if not mx or "error" in mx:
        return
    ratios = mx.get("ratios") or {}
    recall = ratios.get("recall_p99_mixed_over_read_only")
    row(
        "Mixed load: Recall p99, mixed vs reads only",
        "≤ 3x",
        f"{fmt(get(mx, 'mixed', 'methods', 'Recall', 'p99'), ' ms')} vs "
        f"{fmt(get(mx, 'read_only', 'methods', 'Recall', 'p99'), ' ms')} = {recall}x",
        None if recall is None else recall <= 3,
    )
    setmem = ratios.get("setmemory_p50_mixed_over_write_only")
    row(
        "Mixed load: SetMemory p50, mixed vs writes only",
        "≤ 3x",
        f"{fmt(get(mx, 'mixed', 'methods', 'SetMemory', 'p50'), ' ms')} vs "
        f"{fmt(get(mx, 'write_only', 'methods', 'SetMemory', 'p50'), ' ms')} = {setmem}x",
        None if setmem is None else setmem <= 3,
    )
    errors = sum(
        int(m.get("errors", 0))
        for phase in ("read_only", "write_only", "mixed")
        for m in (get(mx, phase, "methods") or {}).values()
    )
    row("Mixed load: errors", "0", fmt(errors), errors == 0)
    rate = get(mx, "replay", "entries_per_s")
    ready = get(mx, "replay", "start_to_serving_s")
    entries = get(mx, "replay", "replayed_entries")
    row(
        "Replay after SIGKILL",
        "≥ 2,000 entries/s; 10k pending: SERVING ≤ 10 s",
        f"{fmt(rate, '/s')} ({fmt(entries)} entries), SERVING after {fmt(ready, ' s')}",
        None if rate is None or ready is None else rate >= 2000 and ready <= 10,
    )
    exit_s, grace = get(mx, "shutdown", "sigterm_to_exit_s"), get(mx, "shutdown", "grace_s")
    row(
        "SIGTERM to exit, 1,000-item batch in flight",
        "≤ grace + 2 s",
        f"{fmt(exit_s, ' s')} (grace {fmt(grace, ' s')}; the batch: "
        f"{get(mx, 'shutdown', 'batch')})",
        None if exit_s is None or grace is None else exit_s <= grace + 2,
    )


def _mixed_lines(mx: dict[str, Any]) -> list[str]:
    if not mx:
        return []
    if "error" in mx:
        return ["", "## Mixed load", "", f"error: {mx['error']}"]
    lines = [
        "",
        "## Mixed load (bench/mixed.py)",
        "",
        f"{mx.get('clients')} Go clients (bench/loadgen mixed), closed loop, each bound to one "
        f"of {mx.get('agents')} agents; the same clients in each phase; local model, "
        f"LanceDB; preload {get(mx, 'preload', 'memories')} REALTALK turns.",
        "",
        "| phase | method | RPS | p50 ms | p95 ms | p99 ms | errors |",
        "|---|---|---|---|---|---|---|",
    ]
    for phase in ("read_only", "write_only", "mixed"):
        methods = get(mx, phase, "methods") or {}
        for name, m in methods.items():
            lines.append(
                f"| {phase} | {name} | {fmt(m.get('rps'))} | {fmt(m.get('p50'))} | "
                f"{fmt(m.get('p95'))} | {fmt(m.get('p99'))} | {fmt(m.get('errors'))} |"
            )
    for key in ("replay", "shutdown"):
        if mx.get(key):
            lines.append(f"\n{key}: `{json.dumps(mx[key])}`")
    return lines


def _calibration_line(c: dict[str, dict[str, float]]) -> list[str]:
    """The machine's speed at the run's start and end (bench/common.py calibration)."""
    if not c:
        return []

    def at(key: str) -> str:
        return " → ".join(str(c[when][key]) for when in ("start", "end") if when in c)

    return [
        "",
        f"Machine speed (start → end; compare runs by these, the box is shared): "
        f"10k x 384 float32 product {at('product_10k_hot_us')} µs in cache, "
        f"{at('product_10k_cold_us')} µs cold; a Python loop {at('python_loop_ms')} ms.",
    ]


def render(r: dict[str, Any]) -> str:
    m = r["machine"]
    v = ", ".join(f"{k} {val}" for k, val in m["versions"].items())
    lines = [
        f"# memoryd bench — {r['date']} ({r['mode']})",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['ram_gb']} GB RAM, Linux {m['kernel']}, Python {m['python']}; {v}. Load average at start: {m.get('load_average_1m_at_start', '?')}.",
        f"Run time {r.get('elapsed_s', '?')} s. Latencies are client-observed over gRPC on loopback (sync client), k = 10, filtered to the agent.",
        *_calibration_line(r.get("calibration") or {}),
        "",
        "## Targets",
        "",
        "| target | goal | measured | met |",
        "|---|---|---|---|",
    ]
    for name, goal, measured, ok in targets(r):
        lines.append(
            f"| {name} | {goal} | {measured} | {'—' if ok is None else ('yes' if ok else 'no')} |"
        )
    rec = r.get("recall") or {}
    if rec:
        lines += ["", "## Recall latency (ms) and recall@10 against exact search", ""]
        lines += [
            "| data | system | p50 | p95 | p99 | recall@10 | memoryd ÷ it (p50) |",
            "|---|---|---|---|---|---|---|",
        ]
        for label, t in rec.items():
            ours = get(t, "vector", "p50")
            lines.append(
                f"| {label} | **memoryd** (vector supplied) | {fmt(get(t, 'vector', 'p50'))} | {fmt(get(t, 'vector', 'p95'))} | {fmt(get(t, 'vector', 'p99'))} | {get(t, 'vector', 'recall_at_10')} | |"
            )
            lines.append(
                f"| {label} | floor: NumPy scan + empty gRPC call | {fmt(t.get('floor_p50_ms'))} | | | 1.0 | {ratio_of(ours, t.get('floor_p50_ms'))} |"
            )
            for name, path in (
                ("LanceDB flat", ("lancedb", "flat")),
                ("LanceDB IVF_HNSW_SQ", ("lancedb", "ann")),
                ("qdrant-client local", ("qdrant_local",)),
                ("qdrant-edge (HNSW)", ("qdrant_edge",)),
            ):
                p = get(t, *path)
                if p is None:
                    continue
                if "error" in p:
                    lines.append(f"| {label} | {name} | error: {p['error'][:80]} | | | | |")
                    continue
                lines.append(
                    f"| {label} | {name} (in process) | {fmt(p.get('p50'))} | {fmt(p.get('p95'))} | {fmt(p.get('p99'))} | {p.get('recall_at_10')} | {ratio_of(ours, p.get('p50'))} |"
                )
            for key, name in (
                ("text_new", "memoryd text query (new each time)"),
                ("text_cached", "memoryd text query (repeated)"),
                ("text_hybrid_cached", "memoryd hybrid text query (repeated)"),
                ("remember_vector", "memoryd Remember, vector supplied (a new memory here)"),
            ):
                p = t.get(key)
                if p and "p50" in p:
                    lines.append(
                        f"| {label} | {name} | {fmt(p['p50'])} | {fmt(p['p95'])} | {fmt(p['p99'])} | | |"
                    )
        lines += [
            "",
            "| data | ingest (RememberBatch, client vectors) | first-search load | graph build | background work after ingest | RSS loaded |",
            "|---|---|---|---|---|---|",
        ]
        for label, t in rec.items():
            lines.append(
                f"| {label} | {fmt(t.get('ingest_per_s'), '/s')} | {fmt(t.get('load_s'), ' s')} | {fmt(t.get('index_build_s'), ' s')} | {fmt(t.get('settle_s'), ' s')} | {fmt(t.get('rss_loaded_mb'), ' MB')} |"
            )
        sweep = get(rec, "10k", "sweep")
        if sweep:
            lines += [
                "",
                "## Concurrency (Recall at 10k, closed loop, one client process)",
                "",
                "The Go client is bench/loadgen (on the generated Go client); the Python one is",
                "grpc.aio (bench/load.py), for comparison. Either way the daemon is the limit.",
                "",
                "| client | clients | RPS | p50 ms | p99 ms |",
                "|---|---|---|---|---|",
            ]
            for s in sweep:
                lines.append(
                    f"| {s.get('client', 'python')} | {s.get('clients')} | {fmt(s.get('rps'))} | {fmt(s.get('p50'))} | {fmt(s.get('p99'))} |"
                )
        lines += recall_throughput.lines(get(rec, "10k", "throughput"))
    kinds = r.get("servers")
    if kinds:
        lines += [
            "",
            "## gRPC server kinds (a Recall handler returning a prebuilt response)",
            "",
            "What the framework alone costs per call on this machine, and what memoryd's",
            "call path (handler and door) adds (bench/grpc_servers.py; Go client, closed loop).",
            "",
            "| server | clients | RPS | p50 ms | p99 ms |",
            "|---|---|---|---|---|",
        ]
        for k in kinds:
            if "error" in k:
                lines.append(
                    f"| {k.get('server', '?')} | {k.get('clients', '')} | error: {k['error'][:80]} | | |"
                )
                continue
            lines.append(
                f"| {k['server']} | {k['clients']} | {fmt(k.get('rps'))} | {fmt(k.get('p50'))} | {fmt(k.get('p99'))} |"
            )
    lines += _mixed_lines(r.get("mixed") or {})
    keyed = r.get("keyed")
    if keyed:
        lines += [
            "",
            "## Keyed memory (bench/keyed_latency.py)",
            "",
            "p50 / p99 ms over gRPC; the first DefaultRead loads the agent's index.",
            "",
            "| keys | DefaultRead 300 tok | with a tag | 2,000 tok | first read | GetKey | ListKeys dir | ListKeys -r | SetMemory |",
            "|---|---|---|---|---|---|---|---|---|",
        ]

        def pp(t: dict[str, Any], name: str) -> str:
            return f"{fmt(get(t, name, 'p50'))} / {fmt(get(t, name, 'p99'))}"

        for label, t in keyed.items():
            lines.append(
                f"| {label} | {pp(t, 'default_read_ms')} | {pp(t, 'default_read_tag_ms')} | "
                f"{pp(t, 'default_read_2000_tokens_ms')} | {fmt(t.get('default_read_first_ms'))} | "
                f"{pp(t, 'get_key_ms')} | {pp(t, 'list_keys_one_dir_page_100_ms')} | "
                f"{pp(t, 'list_keys_recursive_page_100_ms')} | "
                + (
                    pp(t, "set_memory_ms")
                    if "set_memory_ms" in t
                    else f"imported in {t.get('load_s')} s"
                )
                + " |"
            )
    lines += qdrant_report.section(r.get("qdrant"))
    lines += write_report.lines(r.get("write_path") or {})
    lines += _schema_lines(r.get("schemas"))
    w = r.get("writes")
    if w:
        lines += ["", "## Writes", ""]
        for key, val in w.items():
            lines.append(f"- {key}: {val}")
    for key in ("footprint", "tracing", "mcp", "model", "mem0"):
        if r.get(key):
            lines += ["", f"## {key}", "", f"```json\n{_compact(r[key])}\n```"]
    q = r.get("quality")
    if q:
        lines += ["", "## Quality (bench/quality.py)", ""]
        lines.append(q.get("markdown") or f"{q.get('status')}\n\n```\n{q.get('stderr', '')}\n```")
    return "\n".join(lines) + "\n"


def _schema_lines(sf: dict[str, Any] | None) -> list[str]:
    """Section `schemas` (bench/schema_fairness.py)."""
    if not sf:
        return []
    lines = [
        "",
        "## Schema fairness (bench/schema_fairness.py)",
        "",
        f"The victim tenant's calls, p50 / p99 ms, alone and while {sf.get('attacker_clients')} "
        "clients of two other tenants send schemas that take a whole check's CPU budget.",
        "",
        "| per-tenant budget | method | unloaded | loaded | ratio p50 | ratio p99 | attackers answered | daemon CPU |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for name in ("budgeted", "unbudgeted"):
        phase = sf.get(name) or {}
        for method in ("set_working_memory", "remember"):
            t = phase.get(method)
            if not t:
                continue
            lines.append(
                f"| {'on' if name == 'budgeted' else 'off'} | {method} | {p50_p99(t, 'unloaded')} "
                f"| {p50_p99(t, 'loaded')} | {t.get('ratio_p50')}x | {t.get('ratio_p99')}x "
                f"| {phase.get('attacker_answers')} | {phase.get('daemon_cpu_while_loaded')} |"
            )
    return lines


def _compact(value: Any) -> str:
    return json.dumps(value, indent=1)
