#!/usr/bin/env python3
"""Turns one bench/run into bench/results/<date>-<commit>.md: every scenario with its figure,
its baseline from the same run beside it, and the ratio; then the targets of this machine."""
import glob
import json
import os
import platform
import re
import subprocess
import sys

# `report.py --standby RAW OUT DATE COMMIT JMH_OPTS E2E_OPTS THREADS ROUNDS` writes the standby section's
# page instead (bench/run standby): every scenario with and without the synchronous standby, and the ratios.
STANDBY = len(sys.argv) > 1 and sys.argv[1] == "--standby"
args = sys.argv[2:] if STANDBY else sys.argv[1:]
raw, out, date, commit, jmh_opts = args[0:5]
# End-to-end and sold-out runs warm up longer; the latency run sells a warm-up first (bench/run).
e2e_opts, latency_warmup, latency_seconds, latency_warmup_seconds = (
    args[5:9] + [jmh_opts, "?", "?", "0"][len(args[5:9]):])


def score(name):
    path = os.path.join(raw, name + ".json")
    with open(path) as f:
        data = json.load(f)
    if len(data) != 1:
        sys.exit(f"{path}: expected one benchmark result, found {len(data)} (pin its @Params in bench/run)")
    m = data[0]["primaryMetric"]
    # JMH writes the error as the string "NaN" when it has one measured iteration (BENCH_QUICK).
    return float(m["score"]), float(m["scoreError"])


def machine_lines(log):
    values = {}
    with open(os.path.join(raw, log)) as f:
        for line in f:
            m = re.match(r"^(sold|reserve_per_s|p99_ms|invariant)=(\S+)", line.strip())
            if m:
                values[m.group(1)] = m.group(2)
            m = re.match(r"^sold=(\d+) total=(\d+)", line.strip())
            if m:
                values["sold"], values["total"] = m.group(1), m.group(2)
    return values


def lanes(name, phase="measurement"):
    """The lane counters of a JMH log's measured iterations (LaneWindow's `[lanes]` lines), summed:
    {commits, ops, write_ms, seconds, router_calls, router_reserves}, or None (a log from before them)."""
    path = os.path.join(raw, name + ".log")
    if not os.path.exists(path):
        return None
    total = {}
    with open(path) as f:
        for line in f:
            i = line.find("[lanes] phase=" + phase + " ")
            if i < 0:
                continue
            for k, v in re.findall(r"(\w+)=([\d.]+)", line[i:]):
                if k in ("commits", "ops", "write_ms", "seconds", "router_calls", "router_reserves"):
                    total[k] = total.get(k, 0.0) + float(v)
    return total or None


def per_commit(c):
    """(operations per commit, ms decision to commit, Reserves per router call) of lanes() totals."""
    if not c or not c.get("commits"):
        return (None, None, None)
    calls = c.get("router_calls")
    return (c["ops"] / c["commits"], c["write_ms"] / c["commits"],
            c["router_reserves"] / calls if calls else None)


def load_json(sub):
    files = sorted(glob.glob(os.path.join(raw, sub, "*.json")))
    if not files:
        return {}
    with open(files[-1]) as f:
        return json.load(f)


def fmt(v):
    return "?" if v != v else f"{v:,.0f}"



def flush_lags(name):
    """The standby's mean write and flush lag (ms) over a JMH log's measured iterations: BenchServer's sampler
    (`write_lag_mean_ms=`, `flush_lag_mean_ms=`, weighted by its samples with a lag), or None."""
    path = os.path.join(raw, name + ".log")
    n = write = flush = 0.0
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                if not re.search(r"\[standby\] database=\S+ measurement ", line):
                    continue
                m = re.search(r"with_lag=(\d+) write_lag_mean_ms=([\d.]+) flush_lag_mean_ms=([\d.]+)", line)
                if m and int(m.group(1)) > 0:
                    k = int(m.group(1))
                    n, write, flush = n + k, write + k * float(m.group(2)), flush + k * float(m.group(3))
    return (write / n, flush / n) if n else None


def fsync_line(log):
    """(ops/s, µs per op) of fdatasync in pg_test_fsync's "one 8kB write" comparison, or None."""
    path = os.path.join(raw, log)
    if not os.path.exists(path):
        return None
    with open(path) as f:
        text = f.read()
    section = text.split("Compare file sync methods using one 8kB write", 1)
    if len(section) < 2:
        return None
    m = re.search(r"fdatasync\s+([\d.]+) ops/sec\s+([\d.]+) usecs/op", section[1])
    return (float(m.group(1)), float(m.group(2))) if m else None


def standby_page(threads, rounds):
    rounds = int(rounds)
    java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]
    mean = lambda xs: sum(xs) / len(xs)
    o = lambda v, spec: "?" if v is None else f"{v:{spec}}"
    runs = {}  # (scenario, items) -> {"sync": [scores], "local": [...], "ratios": [...], lanes...}
    for scenario in ("engine", "e2e", "single"):
        for items in (1, 1000):
            d = {"sync": [], "local": [], "ratios": [], "opc": {}, "ms": {}, "lag": []}
            for r in range(1, rounds + 1):
                sync, _ = score(f"standby-{scenario}-items{items}-pair-sync-r{r}")
                local, _ = score(f"standby-{scenario}-items{items}-pair-local-r{r}")
                d["sync"].append(sync)
                d["local"].append(local)
                d["ratios"].append(sync / local)
                for db in ("sync", "local"):
                    opc, ms, _ = per_commit(lanes(f"standby-{scenario}-items{items}-pair-{db}-r{r}"))
                    d["opc"].setdefault(db, []).append(opc)
                    d["ms"].setdefault(db, []).append(ms)
                lag = flush_lags(f"standby-{scenario}-items{items}-pair-sync-r{r}")
                if lag:
                    d["lag"].append(lag)
            runs[(scenario, items)] = d
    commit_sync = [score(f"standby-commit-pair-sync-r{r}")[0] for r in range(1, rounds + 1)]
    commit_local = [score(f"standby-commit-pair-local-r{r}")[0] for r in range(1, rounds + 1)]
    fsync = fsync_line("standby-pg-test-fsync.log")
    failover = {}
    rounds_fo = []
    path = os.path.join(raw, "standby-failover.log")
    if os.path.exists(path):
        with open(path) as f:
            for line in f:
                line = line.strip()
                m = re.match(r"^round=(\d+) (.*)", line)
                if m:
                    rounds_fo.append(dict(re.findall(r"(\w+)=(-?\d+)", m.group(2))))
                m = re.match(r"^recovery_ms=(-?\d+|none)$", line)
                if m:
                    failover["recovery_ms"] = m.group(1)
    names = {"engine": "lastunit, lane engine in process", "e2e": "lastunit, end to end (router)",
             "single": "single-statement (plain JDBC)"}
    with open(out, "w") as f:
        w = f.write
        w(f"# Benchmark run {date} ({commit}): with and without a synchronous standby\n\n")
        w(f"Machine: {os.cpu_count()} cores, {platform.system()} {platform.release()}, {java}; both PostgreSQL servers "
          "on the same machine and disk.\n")
        w(f"Produced by `bench/run standby` (JMH options `{jmh_opts}`; end to end `{e2e_opts}`; {threads} callers = JMH "
          f"threads, each blocked on its call; 1 bucket per item; {rounds} round{'s' if rounds != 1 else ''}, the order of "
          "with and without flipped every other round).\n\n")
        w("Every trial starts its own embedded primary with a streaming standby on 127.0.0.1, fsync on (BenchServer).\n"
          "**With** (`database=pair-sync`): `synchronous_standby_names = 'FIRST 1 (standby_a)'`, `synchronous_commit = on`:\n"
          "a commit returns once the standby flushed it. **Without** (`database=pair-local`): the same kind of pair, the\n"
          "trial's databases with `synchronous_commit = local`: the standby still receives and flushes every WAL record on\n"
          "the same disk, but commits do not wait for it. This machine is shared and noisy: read the ratios.\n\n")
        loads = []
        lpath = os.path.join(raw, "standby-loadavg.log")
        if os.path.exists(lpath):
            with open(lpath) as lf:
                for line in lf:
                    parts = line.split()
                    if len(parts) >= 3:
                        try:
                            loads.append(float(parts[-3]))
                        except ValueError:
                            pass
        if loads:
            loads.sort()
            w(f"The machine's 1-minute load average during the run (`/proc/loadavg`, {len(loads)} readings, `standby-loadavg.log`; "
              f"{os.cpu_count()} cores): min {loads[0]:.1f}, median {loads[len(loads) // 2]:.1f}, max {loads[-1]:.1f}.\n\n")
        w("## Reservations per second, with the standby beside without\n\n")
        w("| scenario | items | with standby | without | with ÷ without (each round) | operations per commit, with / without "
          "| ms decision to commit, with / without | standby's write / flush lag (ms) |\n")
        w("|---|---:|---:|---:|---|---|---|---|\n")
        for (scenario, items), d in runs.items():
            each = ", ".join(f"{x:.2f}" for x in d["ratios"])
            opc = " / ".join(o(mean(v) if all(x is not None for x in v) else None, ".1f") for v in (d["opc"]["sync"], d["opc"]["local"]))
            ms = " / ".join(o(mean(v) if all(x is not None for x in v) else None, ".2f") for v in (d["ms"]["sync"], d["ms"]["local"]))
            lag = (f"{mean([x[0] for x in d['lag']]):.2f} / {mean([x[1] for x in d['lag']]):.2f}" if d["lag"] else "?")
            if scenario == "single":
                opc, ms = "—", "—"
            w(f"| {names[scenario]} | {items:,} | {fmt(mean(d['sync']))} | {fmt(mean(d['local']))} "
              f"| **{mean(d['ratios']):.2f}** ({each}) | {opc} | {ms} | {lag} |\n")
        w("\nWith ÷ without: the mean of the rounds' ratios (each round's ratio in brackets); figures are the rounds' means.\n"
          "Operations per commit and decision-to-commit time: the lanes' counters of the measured iterations. The lag:\n"
          "`pg_stat_replication` on the primary sampled every 250 ms during the measured iterations of the `pair-sync`\n"
          "trials (the mean of the samples that had one: how long the standby took to confirm WAL written / flushed,\n"
          "from the primary's local flush; PostgreSQL reports it per WAL position, not per commit).\n\n")
        w("## The ratios\n\n")
        w("| items | lastunit engine with ÷ without | lastunit end to end with ÷ without | single-statement with ÷ without "
          "| engine with standby ÷ single-statement with standby | end to end with standby ÷ single-statement with standby "
          "| target: lastunit with ÷ without ≥ 0.6 |\n|---:|---:|---:|---:|---:|---:|---|\n")
        for items in (1, 1000):
            e, x, s_ = runs[("engine", items)], runs[("e2e", items)], runs[("single", items)]
            re_, rx, rs = mean(e["ratios"]), mean(x["ratios"]), mean(s_["ratios"])
            met = "met" if min(re_, rx) >= 0.6 else ("engine only" if re_ >= 0.6 else ("end to end only" if rx >= 0.6 else "not met"))
            w(f"| {items:,} | {re_:.2f} | {rx:.2f} | {rs:.2f} | {mean(e['sync']) / mean(s_['sync']):.1f}× "
              f"| {mean(x['sync']) / mean(s_['sync']):.1f}× | {met} |\n")
        w("\n## What one commit pays for the standby\n\n")
        cs, cl = mean(commit_sync), mean(commit_local)
        w("One connection alone updating one row and committing in a loop (`CommitBench`, 1 thread), mean µs per commit:\n\n")
        w("| with standby | without | difference: the round trip to the standby's flush |\n|---:|---:|---:|\n")
        w(f"| {cs:,.0f} µs | {cl:,.0f} µs | {cs - cl:,.0f} µs ({cs / cl:.2f}× the commit) |\n\n")
        if fsync:
            w(f"The disk's own `fdatasync` of one 8 kB write (`pg_test_fsync -s 2` in the pairs' directory): "
              f"{fsync[1]:,.0f} µs ({fsync[0]:,.0f}/s).\n\n")
        else:
            w("`pg_test_fsync` was not run (no system PostgreSQL with it) or its output had no fdatasync line.\n\n")
        w("## Failover: last acknowledgement on the old primary to first on the new\n\n")
        if rounds_fo:
            w("`lastunit bench failover`: a standalone shard node (default JDBC timeouts) on a fresh pair, 64 closed-loop "
              "callers on one item, in process, each call with a new key; after 5 s SIGKILL to the primary's postmaster and, "
              "once its last process is gone, the standby promoted (`pg_promote`). Recovery = the first RESERVED answer to "
              "a call sent after the old primary was gone (a commit on the promoted standby) minus the last RESERVED answer "
              "that came before (a commit on the old primary: its backends outlive the postmaster by a moment).\n\n")
            w("| round | recovery ms | SIGKILL → last ack on the old ms (negative: before it) | SIGKILL → first ack on the new ms "
              "| old primary gone after ms | promotion ms | acks on the old | acks on the new | failed calls |\n"
              "|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
            for i, r in enumerate(rounds_fo, 1):
                w(f"| {i} | {r.get('recovery_ms', 'none')} | {r.get('kill_to_last_old_ack_ms', 'none')} "
                  f"| {r.get('kill_to_first_new_ack_ms', 'none')} "
                  f"| {r.get('kill_ms')} | {r.get('promote_ms')} | {r.get('acks_old')} | {r.get('acks_new')} "
                  f"| {r.get('failed_calls')} |\n")
            w(f"\nMedian recovery: {failover.get('recovery_ms', '?')} ms.\n")
        else:
            w("Not run.\n")


if STANDBY:
    standby_page(*args[6:8])
    sys.exit(0)

BUCKETS = (1, 4, 16)
rows = []
for t in (64, 256):
    for items in (1, 1000):
        naive, _ = score(f"naive-items{items}-t{t}")
        single, _ = score(f"single-items{items}-t{t}")
        for b in BUCKETS:
            engine, engine_err = score(f"engine-items{items}-b{b}-t{t}")
            e2e, e2e_err = score(f"e2e-items{items}-b{b}-t{t}")
            rows.append((items, b, t, engine, engine_err, e2e, e2e_err, naive, single))
# The hot item with 256 requests in flight from 4 pipelined callers (bench/run, Pipeline.java).
pipelined = {}
for b in BUCKETS:
    engine, engine_err = score(f"engine-items1-b{b}-p256")
    e2e, e2e_err = score(f"e2e-items1-b{b}-p256")
    pipelined[b] = (engine, engine_err, e2e, e2e_err)
raw_ceiling, raw_err = score("raw-ceiling-t4")
# End to end at 64 callers, 1 bucket, beside the raw ceiling measured right after it (bench/run).
e2e_t64 = score("e2e-items1-b1-t64")
engine_t64 = score("engine-items1-b1-t64")
raw_after = score("raw-ceiling-after-e2e-t64") if os.path.exists(os.path.join(raw, "raw-ceiling-after-e2e-t64.json")) else None
e2e_t64_lanes = per_commit(lanes("e2e-items1-b1-t64"))
engine_t64_lanes = per_commit(lanes("engine-items1-b1-t64"))
soldout, soldout_err = score("soldout-t64")
noop, noop_err = score("noop-t64")
sale = machine_lines("flash-sale.log")
regional = machine_lines("flash-sale-regions.log")


def find(d, *keys):
    """First value in a nested dict whose key path ends with one of keys (p50/p999...)."""
    stack = [d]
    while stack:
        x = stack.pop()
        if isinstance(x, dict):
            for k, v in x.items():
                if k in keys and isinstance(v, (int, float)):
                    return v
                stack.append(v)
    return None


def rate_of(log):
    with open(os.path.join(raw, log)) as f:
        for line in f:
            m = re.search(r"open loop at ([\d,]+) Reserves/s", line)
            if m:
                return int(m.group(1).replace(",", ""))
    return None


def per_second(doc):
    """(seconds with Reserves, seconds with p99 over the slow mark, the slowest second's p99) of a run."""
    per = doc.get("latency_per_second") if isinstance(doc, dict) else None
    if not isinstance(per, dict):
        return (None, None, None)
    seconds = [x for x in per.get("seconds", []) if x.get("count", 0) > 0]
    return (len(seconds), per.get("slow_seconds"), per.get("slowest_p99_ms"))


# Per bucket count of the hot item: (buckets, rate, p50, p90, p99, p99.9, seconds with Reserves, slow seconds,
# slowest second's p99) of its half-load run (the per-second figures: None from a load generator without them).
latencies = []
for b in BUCKETS:
    lj = load_json(f"latency-b{b}")
    all_ = lj.get("latency_ms", {}).get("all", {}) if isinstance(lj.get("latency_ms"), dict) else {}
    p99_line = machine_lines(f"latency-b{b}.log").get("p99_ms")
    latencies.append((b, rate_of(f"latency-b{b}.log"),
                      find(all_, "p50_ms", "p50Ms", "p50"), find(all_, "p90_ms", "p90Ms", "p90"),
                      float(p99_line) if p99_line is not None else find(all_, "p99_ms", "p99Ms", "p99"),
                      find(all_, "p999_ms", "p99_9_ms", "p999Ms", "p999", "p99_9"),
                      *per_second(lj)))


cpus = os.cpu_count()
java = subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]

with open(out, "w") as f:
    w = f.write
    w(f"# Benchmark run {date} ({commit})\n\n")
    w(f"Machine: {cpus} cores, {platform.system()} {platform.release()}, {java}; PostgreSQL on the same machine.\n")
    w(f"Produced by `bench/run` (JMH options `{jmh_opts}`; end to end and the sold-out path `{e2e_opts}`;\n")
    w("callers = JMH threads, each blocked on its call, unless noted). Figures are\n")
    w("reservations per second (durable: committed before the reply) unless noted; error = JMH's\n")
    w("99.9% interval. This machine is shared and noisy: read the ratios, not the absolute numbers.\n\n")
    w("## Reserve throughput against the baselines of the same run\n\n")
    w("| items | buckets | callers | lane engine (in process) | end to end (router) | naive | single-statement | engine ÷ raw ceiling | end to end ÷ single-statement |\n")
    w("|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    for items, b, t, engine, engine_err, e2e, e2e_err, naive, single in rows:
        w(f"| {items} | {b} | {t} | {fmt(engine)} ± {fmt(engine_err)} | {fmt(e2e)} ± {fmt(e2e_err)} | {fmt(naive)} | {fmt(single)} "
          f"| {engine / raw_ceiling:.2f} | {e2e / single:.1f}× |\n")
    w(f"\nRaw ceiling (plain JDBC, batches of 100 holds per transaction, 4 writers, no decisions): "
      f"{fmt(raw_ceiling)} ± {fmt(raw_err)} holds/s.\n\n")
    w("Buckets: every item of the scenario is created with that many escrow buckets (each on its own lane when\n")
    w("the shard has enough lanes; the shard runs its default 4 lanes). The baselines have no buckets.\n\n")
    w("## End to end at 64 callers, 1 bucket, against the raw ceiling\n\n")
    w("The hot item with 64 blocked callers, end to end and in process, beside the raw ceiling measured right\n"
      "after the end-to-end run (`raw-ceiling-after-e2e-t64`). Per commit: the lanes' counters over the measured\n"
      "iterations (the `[lanes]` lines of each log): a closed loop of 64 callers on one lane fills a commit with at\n"
      "most about half of them (those answered by one commit come back while the next is already being written).\n\n")
    w("| scenario | reservations/s | ÷ raw ceiling after it | operations per commit | ms decision to commit | Reserves per router call |\n"
      "|---|---:|---:|---:|---:|---:|\n")
    o = lambda v, spec: "?" if v is None else f"{v:{spec}}"
    ceiling_after = raw_after[0] if raw_after else None
    for label, (sc, err), (opc, ms, rpc) in (("end to end (router), 64 callers", e2e_t64, e2e_t64_lanes),
                                             ("lane engine in process, 64 callers", engine_t64, engine_t64_lanes)):
        w(f"| {label} | {fmt(sc)} ± {fmt(err)} | {o(ceiling_after and sc / ceiling_after, '.2f')} | {o(opc, '.1f')} "
          f"| {o(ms, '.2f')} | {o(rpc, '.1f') if label.startswith('end to end') else '—'} |\n")
    w(f"\nRaw ceiling right after the end-to-end run: "
      f"{'?' if raw_after is None else fmt(raw_after[0]) + ' ± ' + fmt(raw_after[1])} holds/s "
      f"(the suite's own, above: {fmt(raw_ceiling)}).\n\n")
    w("## The hot item with pipelined callers: 256 requests in flight from 4 threads\n\n")
    w("The same Reserves, but 4 JMH threads keep 64 requests in flight each (`-t 4 -p pipeline=64`): each\n")
    w("invocation waits for its oldest request and sends a new one, as an asynchronous client does. The\n")
    w("baselines are the same run's, at 256 callers (a JDBC transaction needs its own thread and connection).\n\n")
    w("| buckets | lane engine (in process) | end to end (router) | single-statement (256 callers) | engine ÷ raw ceiling | end to end ÷ single-statement |\n")
    w("|---:|---:|---:|---:|---:|---:|\n")
    single_hot = next(r[8] for r in rows if r[0] == 1 and r[2] == 256)
    for b in BUCKETS:
        engine, engine_err, e2e, e2e_err = pipelined[b]
        w(f"| {b} | {fmt(engine)} ± {fmt(engine_err)} | {fmt(e2e)} ± {fmt(e2e_err)} | {fmt(single_hot)} "
          f"| {engine / raw_ceiling:.2f} | {e2e / single_hot:.1f}× |\n")
    w("\n")
    w("## The sold-out path\n\n")
    w("| scenario | calls/s | ratio |\n|---|---:|---:|\n")
    w(f"| Reserve of a sold-out item through the router (64 callers) | {fmt(soldout)} ± {fmt(soldout_err)} | {soldout / noop:.2f} of no-op |\n")
    w(f"| no-op gRPC (Health.Check on the same server, 64 callers) | {fmt(noop)} ± {fmt(noop_err)} | 1.00 |\n\n")
    w("## Latency at half of the maximum end-to-end throughput\n\n")
    w(f"Open-loop load generator on the hot item at half of the best end-to-end figure its bucket count reached "
      f"with 256 requests in flight (blocked or pipelined callers): {latency_seconds} s of load after a closed-loop warm-up of {latency_warmup} buyers and "
      f"{latency_warmup_seconds} s of open-loop warm-up at the same rate on other items "
      f"(`bench/results/raw/{date}-{commit}/latency-b<buckets>.log`).\n\n")
    w("| buckets | Reserves/s | p50 ms | p90 ms | p99 ms | p99.9 ms | seconds with p99 over 10 ms | slowest second's p99 ms |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    q = lambda v: "?" if v is None else f"{v:.2f}"
    for b, rate, l50, l90, l99, l999, secs, slow, worst in latencies:
        w(f"| {b} | {'?' if rate is None else fmt(rate)} | {q(l50)} | {q(l90)} | {q(l99)} | {q(l999)} "
          f"| {'?' if slow is None else f'{slow} of {secs}'} | {q(worst)} |\n")
    w("\nPer second: the run cut into one-second windows by reply time, each with its own p99; the load\n"
      "generator's JSON (`latency_per_second`) has every window.\n\n")
    w("What the machine, the lanes and PostgreSQL did over each measured run (the load generator's\n"
      "`conditions`: `/proc/stat`, the JVM that ran the load generator and the platform, the lanes'\n"
      "counters, `pg_stat_bgwriter`):\n\n")
    w("| buckets | machine busy | I/O wait | JVM CPU (of a core) | GC collections, ms | lane commits/s | operations per commit | ms decision to commit | checkpoints | WAL MB |\n"
      "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
    for b in BUCKETS:
        c = load_json(f"latency-b{b}").get("conditions") or {}
        g = lambda k, spec, unit="": "?" if c.get(k) is None else f"{c[k]:{spec}}{unit}"
        wal = "?" if c.get("pg_wal_bytes") is None else f"{c['pg_wal_bytes'] / 1e6:,.0f}"
        w(f"| {b} | {g('machine_busy_pct', '.0f', '%')} | {g('machine_iowait_pct', '.1f', '%')} "
          f"| {g('jvm_cpu_pct_of_core', '.0f', '%')} | {g('gc_collections', ',d')}, {g('gc_ms', ',d')} "
          f"| {g('lane_commits_per_s', ',.0f')} | {g('lane_operations_per_commit', '.1f')} "
          f"| {g('lane_ms_decision_to_commit', '.2f')} | {g('pg_checkpoints', 'd')} | {wal} |\n")
    w("\nHow late the host woke a thread that asked to sleep 0.5 ms, over the seconds before each run\n"
      "(`--host-probe`; nothing of the run was up yet). The half-load tail moves with it on a shared\n"
      "host (docs/performance.md, the round to `fc0190c`):\n\n")
    w("| buckets | seconds | wake-ups | late p50 ms | late p99 ms | late p99.9 ms | latest ms |\n"
      "|---:|---:|---:|---:|---:|---:|---:|\n")
    for b in BUCKETS:
        h = load_json(f"latency-b{b}").get("host_probe") or {}
        g = lambda k, spec: "?" if h.get(k) is None else f"{h[k]:{spec}}"
        w(f"| {b} | {g('seconds', '.1f')} | {g('samples', ',d')} | {g('late_p50_ms', '.2f')} | {g('late_p99_ms', '.2f')} "
          f"| {g('late_p99_9_ms', '.2f')} | {g('late_max_ms', '.2f')} |\n")
    w("\n")
    w("## Flash sale (load generator, 10,000 units, 1,000,000 buyers, 512 in flight)\n\n")
    w("After a warm-up of 10,000 buyers for 10,000 units of other items, then 100,000 more buyers of those items once "
      "sold out (`--warmup 10000 --warmup-sold-out 100000`: both the RESERVED and the SOLD_OUT answer are warm).\n\n")
    w(f"`sold={sale.get('sold', '?')} total={sale.get('total', '?')}`, `invariant={sale.get('invariant', '?')}`, "
      f"`reserve_per_s={sale.get('reserve_per_s', '?')}`, `p99_ms={sale.get('p99_ms', '?')}`.\n\n")
    w("## Flash sale in 3 regions (same sale, stock split evenly, buyers spread evenly, a bucket-balancer)\n\n")
    w(f"`sold={regional.get('sold', '?')} total={regional.get('total', '?')}`, `invariant={regional.get('invariant', '?')}`, "
      f"`reserve_per_s={regional.get('reserve_per_s', '?')}`, `p99_ms={regional.get('p99_ms', '?')}`.\n\n")
    w("## Tenant moves while a sale runs (`lastunit bench move`)\n\n")
    w("A tenant of N items and H live holds (and K holds already sold or released) moved from cell `shared` into a "
      "dedicated cell (2 shards each) while 200 Reserves/s of it and 200/s of another tenant run, open loop. "
      "Pause: the mover's, fence to the target's activation. Blocked: every Reserve of the moving tenant in flight "
      "during the fence, its latency (held in the router until the flip). The other tenant: its p99 over the fence "
      "and its errors.\n\n")
    w("| N items | H live holds | K ended | result | pause (ms) | blocked calls | blocked p50 / p99 (ms) "
      "| other tenant p99 in the fence (ms) | other errors | copy (s) | catch-up passes |\n")
    w("|---:|---:|---:|---|---:|---:|---|---:|---:|---:|---:|\n")
    for spec in ("100-1000-0", "1000-10000-0", "1000-10000-50000", "1000-10000-100000", "5000-50000-0"):
        m = load_json(f"move-{spec}")
        n, h, k = spec.split("-")
        if not m:
            w(f"| {int(n):,} | {int(h):,} | {int(k):,} | missing | | | | | | | |\n")
            continue
        w(f"| {int(n):,} | {int(h):,} | {int(k):,} | {m.get('result')} ({m.get('step')}) | {m.get('pause_ms')} "
          f"| {m.get('blocked_calls')} | {m.get('blocked_p50_ms', 0):.0f} / {m.get('blocked_p99_ms', 0):.0f} "
          f"| {m.get('other_p99_in_fence_ms', 0):.0f} | {m.get('other_errors')} | {m.get('copy_ms', 0) / 1000:.1f} "
          f"| {m.get('catch_up_rounds')} |\n")
    flat = [load_json(f"move-1000-10000-{k}") for k in ("0", "50000", "100000")]
    if all(flat):
        pauses = [m.get("pause_ms", 0) for m in flat]
        w(f"\nThe 1,000-item tenant's pause with 0, 50,000 and 100,000 ended holds: "
          f"{' / '.join(str(p) for p in pauses)} ms (the fence reads only live and recent rows; "
          f"see docs/moves.md, \"The pause\").\n")
    w("\n")
    hot = [r for r in rows if r[0] == 1 and r[2] == 256]
    eng = max(hot, key=lambda r: r[3])
    e2e_best = max(hot, key=lambda r: r[5] / r[8])
    eng_p = max(BUCKETS, key=lambda b: pipelined[b][0])
    e2e_p = max(BUCKETS, key=lambda b: pipelined[b][2])
    eng_top = max(eng[3], pipelined[eng_p][0])
    e2e_top = max(e2e_best[5] / e2e_best[8], pipelined[e2e_p][2] / single_hot)
    w("## Targets on this machine\n\nEach hot-item target is judged at the bucket count (1, 4 or 16) and the caller model\n")
    w("(256 blocked callers, or 256 requests in flight from 4 pipelined callers) that did best; both are shown.\n\n")
    w("| target | measured | met |\n|---|---|---|\n")
    w(f"| lane engine, hot item, 256 callers ≥ 31,000/s | blocked {fmt(eng[3])}/s ({eng[1]} bucket{'s' if eng[1] != 1 else ''}); "
      f"pipelined {fmt(pipelined[eng_p][0])}/s ({eng_p}) | {'yes' if eng_top >= 31000 else 'no'} |\n")
    w(f"| lane engine ≥ 0.6 of the raw ceiling | blocked {eng[3] / raw_ceiling:.2f}; pipelined "
      f"{pipelined[eng_p][0] / raw_ceiling:.2f} | {'yes' if eng_top / raw_ceiling >= 0.6 else 'no'} |\n")
    w(f"| end to end ≥ 10× single-statement (hot item, 256 callers) | blocked {e2e_best[5] / e2e_best[8]:.1f}× "
      f"({e2e_best[1]} bucket{'s' if e2e_best[1] != 1 else ''}); pipelined {pipelined[e2e_p][2] / single_hot:.1f}× ({e2e_p}) "
      f"| {'yes' if e2e_top >= 10 else 'no'} |\n")
    w(f"| sold-out path ≥ 0.7 of the no-op ceiling | {soldout / noop:.2f} | {'yes' if soldout / noop >= 0.7 else 'no'} |\n")
    measured = [l for l in latencies if l[4] is not None]
    if measured:
        best = min(measured, key=lambda l: l[4])
        others = ", ".join(f"{l[4]:.2f} ms ({l[0]})" for l in measured if l is not best)
        w(f"| p99 of Reserve at half load < 10 ms | {best[4]:.2f} ms ({best[0]} bucket{'s' if best[0] != 1 else ''}"
          f" at {fmt(best[1]) if best[1] else '?'}/s; others: {others}) | {'yes' if best[4] < 10 else 'no'} |\n")
    else:
        w("| p99 of Reserve at half load < 10 ms | ? | ? |\n")
