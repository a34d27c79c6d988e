#!/usr/bin/env python3
"""Turns the JMH results of benchmarks/run.sh into docs/benchmarks.md's generated section and an SVG chart.

Standard library only. Usage (run.sh calls it):
    python3 benchmarks/report.py RESULTS_JSON RUN_INFO_JSON DOC_MD CHART_SVG

The doc keeps everything outside the markers <!-- generated:begin --> / <!-- generated:end --> as written by hand;
everything between them is replaced on every run.
"""
import json
import os
import re
import subprocess
import math
import sys
from collections import defaultdict

GUARDS = {
    "a": "(a) no idempotency",
    "b": "(b) this library",
    "c": "(c) by hand (floor)",
    "d": "(d) Spring Integration",
    "e": "(e) Camel",
    "f": "(f) = (c) + the old claim's 5 statements",
    "p": "(b) on the hash-partitioned table",
}
COLORS = {"a": "#9e9e9e", "b": "#1f77b4", "c": "#2ca02c", "d": "#ff7f0e", "e": "#d62728", "f": "#9467bd",
          "p": "#17becf"}
BEGIN, END = "<!-- generated:begin -->", "<!-- generated:end -->"
ALLOC = {}  # bytes allocated per operation (JMH's gc profiler), by the same keys as the scores
COSTS = {}  # per transaction: CPU (JVM thread, database backend) in ns and log written in bytes, by the scores' keys
WARM_UP = {}  # transactions each trial ran before the JIT went quiet, by the scores' keys
TRIALS = defaultdict(list)  # every trial of a key: (transactions/s, the step of the plan that measured it)


def geomean(xs):
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def load_costs(results_path):
    """The costs.jsonl each trial appended beside the JMH JSON: JVM and database CPU, log bytes per transaction."""
    path = os.path.join(os.path.dirname(os.path.abspath(results_path)), "costs.jsonl")
    if not os.path.exists(path):
        return
    # a key measured in more than one trial (the A-B-B-A steps): the costs of all its trials over all their
    # transactions; a reading unknown in any trial is unknown
    sums = {}
    for line in open(path, encoding="utf-8"):
        if not line.strip():
            continue
        c = json.loads(line)
        key = (c["db"], int(c["threads"]), int(c["duplicates"]), int(c["prefill"]), c["guard"])
        n, jvm, backend, log = sums.get(key, (0, 0, 0, 0))
        sums[key] = (n + c["transactions"], jvm + c["jvm_cpu_ns"],
                     -1 if backend < 0 or c["backend_cpu_ns"] < 0 else backend + c["backend_cpu_ns"],
                     -1 if log < 0 or c.get("log_bytes", -1) < 0 else log + c["log_bytes"])
        if "warm_up_transactions" in c:
            WARM_UP.setdefault(key, []).append(c["warm_up_transactions"])
    for key, (n, jvm, backend, log) in sums.items():
        COSTS[key] = (jvm / n, backend / n if backend >= 0 else None, log / n if log >= 0 else None)


def load(results_path, info_path):
    with open(results_path, encoding="utf-8") as f:
        results = json.load(f)
    info = {}
    if os.path.exists(info_path):
        with open(info_path, encoding="utf-8") as f:
            info = json.load(f)
    orders, paths = {}, {}
    # which step of the plan each result came from (older runs did not say: then each its own)
    steps = info.get("result_steps") or list(range(len(results)))
    allocs = defaultdict(list)
    for i, r in enumerate(results):
        name = r["benchmark"].rsplit(".", 2)
        cls, method = name[-2], name[-1]
        p = r.get("params", {})
        m = r["primaryMetric"]
        score, err, unit = m["score"], m.get("scoreError"), m["scoreUnit"]
        if err is not None and (isinstance(err, str) or err != err):  # "NaN"
            err = None
        alloc = r.get("secondaryMetrics", {}).get("gc.alloc.rate.norm", {}).get("score")
        if cls == "OrderBenchmark":
            key = (p["db"], int(r["threads"]), int(p["duplicates"]), int(p["prefill"]), p["guard"])
            TRIALS[key].append((score, steps[i] if i < len(steps) else i, err))
            if alloc is not None:
                allocs[key].append(alloc)
        else:
            paths[(method, p.get("store", ""))] = (score, err, unit)
            if alloc is not None:
                ALLOC[(method, p.get("store", ""))] = alloc
    for key, trials in TRIALS.items():
        # one trial: its score and JMH's error; several: their geometric mean, and no error (the trials are listed)
        orders[key] = (geomean([t[0] for t in trials]), trials[0][2] if len(trials) == 1 else None)
    for key, values in allocs.items():
        ALLOC[key] = sum(values) / len(values)
    return orders, paths, info


def machine():
    def run(cmd):
        try:
            return subprocess.run(cmd, capture_output=True, text=True, timeout=10).stdout.strip()
        except (OSError, subprocess.SubprocessError):
            return "?"
    cpu = "?"
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {"nproc": run(["nproc"]), "free": run(["free", "-h"]), "cpu": cpu}


def fmt(x, digits=0):
    return f"{x:,.{digits}f}"


def ratio(x, y):
    return None if x is None or y is None or y == 0 else x / y


def score(orders, db, t, dup, pre, g):
    v = orders.get((db, t, dup, pre, g))
    return v[0] if v else None


def paired(orders, x, y):
    """x's throughput over y's (keys). Where one step measured both (the A-B-B-A steps measure each pair twice, in
    opposite orders), the ratio within each such step, then their geometric mean: drift of the host's load between
    trials weighs on both sides alike. Otherwise the ratio of the keys' (mean) scores."""
    shared = sorted({s for _, s, _ in TRIALS.get(x, [])} & {s for _, s, _ in TRIALS.get(y, [])})
    if not shared:
        return ratio(orders[x][0] if x in orders else None, orders[y][0] if y in orders else None)
    return geomean([geomean([v for v, s, _ in TRIALS[x] if s == step]) /
                    geomean([v for v, s, _ in TRIALS[y] if s == step]) for step in shared])


def baseline(orders, db, t):
    """(a)'s throughput does not depend on duplicates or the guard table's pre-fill: it is measured once per thread
    count, with no duplicates and on the empty table."""
    return score(orders, db, t, 0, 0, "a")


def configs(orders):
    return sorted({k[:4] for k in orders}, key=lambda k: (k[0] != "postgresql", k[3], k[2], k[1]))


def ops_table(orders):
    lines = ["| database | threads | duplicates | pre-filled rows | " + " | ".join(GUARDS[g] for g in GUARDS) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(GUARDS)]
    for db, t, dup, pre in configs(orders):
        cells = []
        for g in GUARDS:
            v = orders.get((db, t, dup, pre, g))
            if v is None and g == "a" and (dup, pre) != (0, 0) and baseline(orders, db, t) is not None:
                cells.append("(as 0%/0)")
            elif v is None:
                cells.append("–")
            else:
                trials = TRIALS.get((db, t, dup, pre, g), [])
                err = f" ± {fmt(v[1])}" if v[1] is not None else ""
                if len(trials) > 1:
                    err = " (" + " / ".join(fmt(x) for x, _, _ in trials) + ")"
                cells.append(f"{fmt(v[0])}{err}")
        lines.append(f"| {db} | {t} | {dup}% | {pre:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def per_transaction_table(orders):
    """Throughput, round trips, JVM CPU, database CPU, log written and bytes allocated per transaction."""
    rt = round_trips()
    rows = sorted({k for k in orders}, key=lambda k: (k[0] != "postgresql", k[3], k[2], k[1], list(GUARDS).index(k[4])))
    if not rows:
        return "(not measured)"
    lines = ["| database | threads | duplicates | pre-filled rows | guard | transactions/s | round trips | JVM CPU | "
             "database CPU | log written | allocated | warm-up |",
             "|---|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|"]
    for db, t, dup, pre, g in rows:
        trips = "–"
        if rt is not None and g in ("b", "c", "p"):
            first, replay = rt["c" if g == "c" else "b"][db]
            trips = f"{first + (replay - first) * dup / 100:g}"
        jvm, backend, log = COSTS.get((db, t, dup, pre, g), (None, None, None))
        alloc = ALLOC.get((db, t, dup, pre, g))
        warm = WARM_UP.get((db, t, dup, pre, g))
        warm = None if not warm else round(sum(warm) / len(warm))
        lines.append(f"| {db} | {t} | {dup}% | {pre:,} | {GUARDS[g]} | {fmt(orders[(db, t, dup, pre, g)][0])} | "
                     f"{trips} | {'–' if jvm is None else f'{jvm / 1000:,.0f} µs'} | "
                     f"{'–' if backend is None else f'{backend / 1000:,.0f} µs'} | "
                     f"{'–' if log is None else f'{log / 1024:,.1f} KB'} | "
                     f"{'–' if alloc is None else f'{alloc / 1024:,.1f} KB'} | "
                     f"{'–' if warm is None else f'{warm:,}'} |")
    return "\n".join(lines)


def alloc_table(orders):
    rows = sorted({k[:4] for k in ALLOC if len(k) == 5}, key=lambda k: (k[0] != "postgresql", k[3], k[2], k[1]))
    rows = [r for r in rows if r[1] == 1] or rows
    if not rows:
        return "(not measured)"
    lines = ["| database | threads | duplicates | pre-filled rows | " + " | ".join(GUARDS[g] for g in GUARDS) + " |",
             "|---|---:|---:|---:|" + "---:|" * len(GUARDS)]
    for db, t, dup, pre in rows:
        cells = [f"{ALLOC[(db, t, dup, pre, g)] / 1024:,.1f} KB" if (db, t, dup, pre, g) in ALLOC else "–"
                 for g in GUARDS]
        lines.append(f"| {db} | {t} | {dup}% | {pre:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def ratio_table(orders):
    lines = ["| database | threads | duplicates | pre-filled rows | b/a | b/c | b/d | b/e |",
             "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for db, t, dup, pre in configs(orders):
        if (db, t, dup, pre, "b") not in orders:
            continue
        cells = []
        for other in ("a", "c", "d", "e"):
            r = paired(orders, (db, t, dup, pre, "b"), (db, t, 0, 0, "a") if other == "a"
                       else (db, t, dup, pre, other))
            cells.append("–" if r is None else f"{r:.2f}")
        lines.append(f"| {db} | {t} | {dup}% | {pre:,} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def path_table(paths):
    labels = {
        "directCall": "a call on the bare object, no proxy",
        "plainCall": "a plain call (same bean, method without @Idempotent)",
        "readOnlyCall": "a READ_ONLY @Idempotent call",
        "firstExecution": "a first execution (claim, run, record)",
        "replayFromStore": "a replay from the store",
        "replayFromPrefilter": "a replay from the Caffeine pre-filter",
    }
    order = list(labels)
    lines = ["| path | store | time per call | ± | allocated per call |", "|---|---|---:|---:|---:|"]
    for (method, store), (s, err, unit) in sorted(paths.items(), key=lambda kv: (order.index(kv[0][0])
                                                                                  if kv[0][0] in order else 99,
                                                                                  kv[0][1])):
        lines.append(f"| {labels.get(method, method)} | {store if method not in ('directCall', 'plainCall', 'readOnlyCall') else '–'}"
                     f" | {s:,.1f} {unit} | {'' if err is None else f'{err:,.1f}'} | "
                     f"{'–' if (method, store) not in ALLOC else f'{ALLOC[(method, store)]:,.0f} B'} |")
    return "\n".join(lines)


def path_time(paths, method, store):
    v = paths.get((method, store))
    return v[0] if v else None


ROUND_TRIPS = "idempotency-jdbc-store/target/surefire-reports/dev.idempotency.jdbc.RoundTripsIT-output.txt"


def round_trips():
    """The counts RoundTripsIT printed in the last build (ours and the floor's), or None."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ROUND_TRIPS)
    if not os.path.exists(path):
        return None
    found = {}
    for line in open(path, encoding="utf-8"):
        m = re.match(r"round trips(?P<floor> of the floor \(c\))?: postgresql first=(\d+) replay=(\d+); "
                     r"mariadb first=(\d+) replay=(\d+)", line)
        if m:
            found["c" if m.group("floor") else "b"] = {
                "postgresql": (int(m.group(2)), int(m.group(3))), "mariadb": (int(m.group(4)), int(m.group(5)))}
    return found if "b" in found and "c" in found else None


def targets(orders, paths):
    rows = []

    def verdict(ok):
        return "–" if ok is None else ("met" if ok else "**missed**")

    rt = round_trips()
    for db in ("postgresql", "mariadb"):
        if rt is None:
            rows.append((f"round trips, {db}: first execution = (c), replay < (c)", "not counted (run RoundTripsIT)",
                         "–"))
            continue
        (bf, br), (cf, cr) = rt["b"][db], rt["c"][db]
        rows.append((f"round trips, first execution, {db}: equal to the floor (c)", f"{bf} vs {cf}",
                     verdict(bf <= cf)))
        rows.append((f"round trips, replay from the store, {db}: fewer than the floor (c)", f"{br} vs {cr}",
                     verdict(br < cr)))
    for other, need, label, subset in (("c", 0.90, "(b) ≥ 0.90 × (c)", True), ("d", 1.0, "(b) ≥ (d)", False),
                                       ("e", 1.0, "(b) ≥ (e)", False)):
        for db in ("postgresql", "mariadb"):
            rs = []
            for cdb, t, dup, pre in configs(orders):
                if cdb != db or (subset and (t not in (1, 16) or pre != 0)):
                    continue
                r = paired(orders, (db, t, dup, pre, "b"), (db, t, dup, pre, other))
                if r is not None:
                    rs.append((r, t, dup, pre))
            if not rs:
                continue
            worst = min(rs)
            short = sum(1 for r in rs if r[0] < need)
            scope = "1 and 16 threads, 0% and 50% duplicates" if subset else "every configuration measured"
            rows.append((f"{label}, {db}, {scope}",
                         f"lowest b/{other} = {worst[0]:.2f} ({worst[1]} threads, {worst[2]}% duplicates, "
                         f"{worst[3]:,} rows); {len(rs) - short} of {len(rs)} met",
                         verdict(short == 0)))
    for db in ("postgresql", "mariadb"):
        b, c = ALLOC.get((db, 1, 0, 0, "b")), ALLOC.get((db, 1, 0, 0, "c"))
        r = ratio(b, c)
        rows.append((f"bytes allocated per transaction ≤ 1.5 × (c), {db}, 1 thread, no duplicates",
                     "–" if r is None else f"{b / 1024:,.1f} vs {c / 1024:,.1f} KB: {r:.2f}×",
                     verdict(None if r is None else r <= 1.5)))
    plain, ro = path_time(paths, "plainCall", "memory"), path_time(paths, "readOnlyCall", "memory")
    r = ratio(ro, plain)
    rows.append(("READ_ONLY within 5% of a plain call",
                 "–" if r is None else f"{ro:,.1f} vs {plain:,.1f} ns: {(r - 1) * 100:+.0f}%",
                 verdict(None if r is None else r <= 1.05)))
    pg, pf = path_time(paths, "replayFromStore", "postgresql"), path_time(paths, "replayFromPrefilter", "postgresql")
    r = ratio(pg, pf)
    rows.append(("a replay from the pre-filter ≥ 100× faster than from PostgreSQL",
                 "–" if r is None else f"{pg:,.0f} vs {pf:,.0f} ns: {r:,.0f}×",
                 verdict(None if r is None else r >= 100)))
    for db in ("postgresql", "mariadb"):
        for t in (1, 4, 16):
            for pre in sorted({k[3] for k in orders if k[3] > 0}):
                for g, table in (("b", "the plain table"), ("p", "the hash-partitioned table")):
                    r = paired(orders, (db, t, 0, pre, g), (db, t, 0, 0, g))
                    if r is not None:
                        # faster on the bigger table by more than the tolerance is the machine's noise, not a gain:
                        # no verdict either way from such a pair
                        noisy = r > 1.10
                        note = " (faster on the bigger table: noise, not a gain; measure again)" if noisy else ""
                        rows.append((f"cost within 10% from 0 to {pre:,} rows, {db}, {t} threads, {table}",
                                     f"({g}) at {pre:,} / ({g}) empty = {r:.2f}{note}",
                                     verdict(None if noisy else r >= 0.90)))
    if not any(k[3] >= 10_000_000 for k in orders):
        rows.append(("cost within 10% from 0 to 10,000,000 rows, 16 threads",
                     "not in this run (`benchmarks/run.sh` measures it unless `--only` leaves it out or "
                     "`LARGE_ROWS` makes the tables smaller)", "–"))
    lines = ["| target | measured | verdict |", "|---|---|---|"]
    lines += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(lines)


def chart(orders, path):
    panels = []
    for db, dup, pre in sorted({(k[0], k[2], k[3]) for k in orders},
                               key=lambda k: (k[0] != "postgresql", k[2], k[1])):
        threads = sorted({k[1] for k in orders if (k[0], k[2], k[3]) == (db, dup, pre)})
        guards = [g for g in GUARDS if any((db, t, dup, pre, g) in orders for t in threads)
                  or (g == "a" and any(baseline(orders, db, t) for t in threads))]
        if "b" not in guards:
            continue
        panels.append((db, dup, pre, threads, guards))
    pw, ph, cols = 460, 250, 2
    rows = (len(panels) + cols - 1) // cols
    width, height = pw * cols + 20, ph * rows + 101
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'viewBox="0 0 {width} {height}" font-family="sans-serif" font-size="11">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           '<text x="10" y="20" font-size="15" font-weight="bold">Orders per second (higher is better): one order '
           'row per transaction</text>']
    lx, ly = 10, 32
    for g in GUARDS:
        if lx + 20 + 7 * len(GUARDS[g]) > width:
            lx, ly = 10, ly + 16
        out.append(f'<rect x="{lx}" y="{ly}" width="12" height="12" fill="{COLORS[g]}"/>'
                   f'<text x="{lx + 16}" y="{ly + 10}">{GUARDS[g]}</text>')
        lx += 20 + 7 * len(GUARDS[g])
    for i, (db, dup, pre, threads, guards) in enumerate(panels):
        ox, oy = 10 + (i % cols) * pw, 76 + (i // cols) * ph
        top = max((score(orders, db, t, dup, pre, g) or (baseline(orders, db, t) if g == "a" else 0) or 0)
                  for t in threads for g in guards) or 1
        x0, y0, plot_w, plot_h = ox + 45, oy + 30, pw - 65, ph - 75
        out.append(f'<text x="{ox}" y="{oy + 15}" font-weight="bold">{db}, {dup}% duplicates, '
                   f'{pre:,} rows pre-filled</text>')
        for k in range(5):
            v = top * k / 4
            y = y0 + plot_h - plot_h * k / 4
            out.append(f'<line x1="{x0}" x2="{x0 + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="#ddd"/>'
                       f'<text x="{x0 - 4}" y="{y + 4:.1f}" text-anchor="end">{v:,.0f}</text>')
        gw = plot_w / len(threads)
        bw = min(22, (gw - 16) / len(guards))
        for j, t in enumerate(threads):
            gx = x0 + j * gw + (gw - bw * len(guards)) / 2
            for n, g in enumerate(guards):
                v = score(orders, db, t, dup, pre, g)
                if v is None and g == "a":
                    v = baseline(orders, db, t)
                if v is None:
                    continue
                h = plot_h * v / top
                out.append(f'<rect x="{gx + n * bw:.1f}" y="{y0 + plot_h - h:.1f}" width="{bw - 2:.1f}" '
                           f'height="{h:.1f}" fill="{COLORS[g]}"><title>{GUARDS[g]}, {t} threads: '
                           f'{v:,.0f} ops/s</title></rect>')
            out.append(f'<text x="{x0 + j * gw + gw / 2:.1f}" y="{y0 + plot_h + 15}" text-anchor="middle">'
                       f'{t} thread{"s" if t > 1 else ""}</text>')
    out.append(f'<text x="10" y="{height - 8}" fill="#555">(a) is measured once per thread count, with no duplicates '
               'on the empty table, and repeated in every panel. Data: benchmarks/results/results.json</text>')
    out.append("</svg>")
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


def warm_up(info):
    w = info.get("warm_up_transactions")
    least = f"{w:,}" if isinstance(w, int) else "?"
    quiet = info.get("jit_quiet")
    if quiet is None:
        return least + " transactions"
    rounds = info.get("quiet_rounds", 1)
    which = "one" if rounds == 1 else f"{rounds} in a row"
    return (f"at least {least} transactions, then rounds of {info.get('warm_up_round', '?'):,} until {which} spent at "
            f"most {quiet:.0%} of their time compiling (the JIT's own account; at most {info.get('warm_up_seconds', '?')} s; "
            "each trial's count is the per-transaction table's last column)")


def generated(orders, paths, info, chart_rel):
    m = machine()
    dbs = info.get("databases", {})
    prefill = info.get("prefill_seconds", {})
    missing = info.get("missing", [])
    parts = [
        f"Run `{info.get('run', '?')}` of plan `{info.get('plan', '?')}`, started {info.get('started', '?')} "
        f"(UTC), {info.get('seconds', '?')} s for the JMH part.",
        "",
        "**Machine.** `nproc` = " + m["nproc"] + "; CPU: " + m["cpu"] + "; " + info.get("jvm", "") + ". Load "
        "average (1, 5, 15 min) before the run: " + info.get("load_average_before", "?") + ", after: "
        + info.get("load_average_after", "?") + " (anything above 2 is other work competing for the 2 cores).",
        "",
        "```text\n$ free -h\n" + m["free"] + "\n```",
        "",
        "**Databases.** " + "; ".join(f"{k}: {v}" for k, v in dbs.items()) + ". Stock settings of the Debian "
        "packages (fsync on, synchronous commit), on the same 2 cores as the benchmark JVM.",
        "",
        f"**JMH.** {info.get('settings', '?')}, after a warm-up per trial of {warm_up(info)}"
        " (on the trial's threads, at least 4, before JMH's own warm-up); throughput mode for the orders (transactions per second, the thread "
        "count is JMH's `-t`), average time for the paths.",
        "",
        "**Pre-fill** (built once per run, before any measurement; each trial deletes all but the pre-filled rows "
        "first): " + ("; ".join(f"{k} rows in {v} s" for k, v in prefill.items()) or "none") + ".",
        "",
        "**Steps run:**",
        "",
    ]
    parts += [f"- `{s}`" for s in info.get("steps", [])]
    if missing:
        parts += ["", "**Steps with missing results:** " + "; ".join(missing)]
    parts += ["", "### Targets", "", targets(orders, paths),
              "", "### Ratios (b = this library)", "",
              "Where a step measured both guards of a ratio (in the short plan: (b) against (c), (d) and (e), each "
              "pair twice, A-B-B-A: one step in one order, the next in the reverse order), the ratio is taken within "
              "each step and the two are averaged (geometric mean), so that load the host drifts through between "
              "trials weighs on both sides alike; the pre-filled tables are compared with (b) or (p) empty in the same "
              "step. (a) is measured with no duplicates on the empty table and is the denominator of every b/a: "
              "without a guard, a duplicate costs what the first call cost.", "",
              ratio_table(orders),
              "", f"![orders per second]({chart_rel})", "",
              "### Per transaction", "",
              "Round trips from `RoundTripsIT` (counted on the wire; with 50% duplicates, the mean of a first "
              "execution and a replay); JVM CPU from `ThreadMXBean` on the calling thread, around each measured "
              "transaction; database CPU from `/proc/<id>/schedstat` of the pool's server processes (PostgreSQL) or "
              "threads (MariaDB), over the measurement iterations (the server's background work is not in it); "
              "log written from the growth of PostgreSQL's WAL position or MariaDB's redo log sequence number over the "
              "same iterations (server-wide; full-page images included); "
              "bytes allocated from JMH's `-prof gc`.", "",
              per_transaction_table(orders), "",
              "### Throughput (transactions per second, ± the 99.9% confidence half-width JMH reports)", "",
              "A guard measured in more than one trial shows their geometric mean, then each trial's in the order "
              "they ran; its costs per transaction above are over all its trials' transactions.", "",
              ops_table(orders),
              "", "### Bytes allocated per transaction (JMH `-prof gc`, one thread)", "",
              "The JVM's work per transaction, which other load on the machine does not move: the Java side of each "
              "guard, driver and Spring transaction included.", "",
              alloc_table(orders),
              "", "### In-process costs (one thread)", "", path_table(paths)]
    return "\n".join(parts)


def main(argv):
    if len(argv) != 5:
        print(__doc__, file=sys.stderr)
        return 2
    results, info_path, doc, chart_path = argv[1:]
    orders, paths, info = load(results, info_path)
    load_costs(results)
    chart(orders, chart_path)
    chart_rel = os.path.relpath(chart_path, os.path.dirname(doc))
    body = generated(orders, paths, info, chart_rel)
    text = open(doc, encoding="utf-8").read() if os.path.exists(doc) else \
        "# Benchmarks\n\n" + BEGIN + "\n" + END + "\n"
    if BEGIN not in text or END not in text:
        text = text.rstrip() + "\n\n" + BEGIN + "\n" + END + "\n"
    text = re.sub(re.escape(BEGIN) + ".*?" + re.escape(END), lambda _: BEGIN + "\n" + body + "\n" + END, text,
                  flags=re.DOTALL)
    with open(doc, "w", encoding="utf-8") as f:
        f.write(text)
    print(f"wrote {doc} and {chart_path}: {len(orders)} order results, {len(paths)} path results")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
