"""End-to-end sustained throughput from PostgreSQL: `hudi-cdc capture` (continuous, Debezium embedded) and
`hudi-cdc stream` (continuous, MoR) running side by side while a SQL load generator commits batched
UPDATEs at fixed offered rates; per rate, the freshness of every change (its transaction's commit ->
readable in the lake).

    python -m benchmarks.e2e_postgres --rows 1000000 --rates 2000,5000,10000 [--step-seconds 60]
        [--work /work/bench-data/e2e] [--out results.json]

A throwaway PostgreSQL 15 (hudi_cdc.sources.postgres.local) with a `customers` table of --rows rows, captured
(`capture --once`: the snapshot) and bootstrapped first. The load generator commits one transaction per
second of `rate` rows (UPDATE ... WHERE customer_id in a range, ranges walking the table), noting the wall
time just before each COMMIT. Debezium stamps every event of a transaction with its commit time
(`__source_ts_ms`), and hudi-cdc's streamer records the newest such time each commit applied; a
transaction is readable once a completed commit's newest source time reaches its COMMIT's wall time
(the next transaction commits a second later, so no earlier commit can reach it).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

from benchmarks import pg as bench_pg  # noqa: E402
from benchmarks import procs, report  # noqa: E402
from benchmarks.procs import cpu_seconds, start, stop  # noqa: E402
from benchmarks.sustained import Monitor, weighted  # noqa: E402


def progress(msg: str) -> None:
    print(f"[e2e {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def cli(config: Path, *args: str) -> list[str]:
    return procs.hudi_cdc("--config", str(config), *args)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--rates", default="2000,5000,10000", help="offered rates, changed rows/s, in order")
    ap.add_argument("--step-seconds", type=int, default=60)
    ap.add_argument("--drain-seconds", type=float, default=180)
    ap.add_argument("--p95-bound", type=float, default=30.0)
    ap.add_argument("--rotate-seconds", type=float, default=1.0, help="capture: close a landed file this often")
    ap.add_argument("--flush-size", type=int, default=10_000)
    ap.add_argument("--work", default="/work/bench-data/e2e")
    ap.add_argument("--out")
    args = ap.parse_args(argv)

    import psycopg

    work = procs.fresh_work(args.work)
    command = "python -m benchmarks.e2e_postgres " + " ".join(argv if argv is not None else sys.argv[1:])
    results: dict = {"command": command,
                     "machine": report.machine(), "rows": args.rows, "steps": []}
    pg, password = bench_pg.bench_postgres(work)
    env = {**procs.env(), bench_pg.PASSWORD_ENV: password}
    procs_up: list = []
    try:
        bench_pg.load_customers(pg, "customer_id bigint PRIMARY KEY, name text, country text, segment text, "
                                "balance bigint", "g, 'customer ' || g, 'C' || lpad((g %% 20)::text, 2, '0'), "
                                "(ARRAY['retail','smb','enterprise'])[1 + g %% 3], g", args.rows)
        config = bench_pg.write_pipeline(work, pg.port, args.flush_size, table_types=["MERGE_ON_READ"])
        logs = work / "logs"
        logs.mkdir()
        m = procs.run(cli(config, "capture", "--once"), logs / "capture-snapshot.log", extra_env=env)
        progress(f"capture --once (snapshot of {args.rows:,} rows): {m.seconds:.1f}s")
        results["snapshot_capture_s"] = round(m.seconds, 1)
        m = procs.run(cli(config, "bootstrap", "--table", "customers"), logs / "bootstrap.log", extra_env=env)
        progress(f"bootstrap MoR: {m.seconds:.1f}s")
        results["bootstrap_s"] = round(m.seconds, 1)
        table = work / "lake" / "customers_mor"
        if not table.exists():
            table = next(p for p in (work / "lake").rglob("hoodie.properties")).parent.parent
        mon = Monitor(table)
        cap = start(cli(config, "capture", "--rotate-seconds", str(args.rotate_seconds)), logs / "capture.log", env)
        procs_up.append(cap)
        strm = start(cli(config, "stream", "--table", "customers", "--type", "mor"), logs / "stream.log", env)
        procs_up.append(strm)
        rss = [procs.PeakRss(cap[0].pid), procs.PeakRss(strm[0].pid)]
        with psycopg.connect(pg.dsn("bench")) as conn:
            # warm-up: one small transaction, visible in the lake before the ladder starts
            t = time.time()
            conn.execute("UPDATE customers SET balance = balance + 1 WHERE customer_id <= 10")
            before = int(time.time() * 1000)
            conn.commit()
            while mon.covered_by_source_ts(before - 5) is None:
                for p, _ in procs_up:
                    if p.poll() is not None:
                        raise RuntimeError(f"a continuous process exited {p.returncode}; logs in {logs}")
                if time.time() - t > 600:
                    raise RuntimeError("the warm-up change was not in the lake within 600 s")
                time.sleep(0.5)
            progress(f"capture + stream up: a change readable after {time.time() - t:.1f}s")
            nxt = 1
            for rate in (int(r) for r in args.rates.split(",")):
                txns: list[tuple[int, int]] = []  # (wall ms just before COMMIT, rows)
                load0 = os.getloadavg()[0]
                cpu0 = [cpu_seconds(p.pid) for p, _ in procs_up]
                t0 = time.time() + 0.5
                late = 0.0
                for i in range(args.step_seconds):
                    delay = t0 + i - time.time()
                    if delay > 0:
                        time.sleep(delay)
                    else:
                        late = max(late, -delay)
                    lo = nxt
                    hi = lo + rate - 1
                    if hi > args.rows:
                        lo, hi = 1, rate
                    nxt = hi + 1
                    conn.execute("UPDATE customers SET balance = balance + 1, name = name || '.' "
                                 "WHERE customer_id BETWEEN %s AND %s", (lo, hi))
                    txns.append((int(time.time() * 1000), rate))
                    conn.commit()
                fed = time.time() - t0
                deadline = time.time() + args.drain_seconds
                while mon.covered_by_source_ts(txns[-1][0]) is None and time.time() < deadline:
                    for p, _ in procs_up:
                        if p.poll() is not None:
                            raise RuntimeError(f"a continuous process exited {p.returncode}; logs in {logs}")
                    time.sleep(0.5)
                drained = mon.covered_by_source_ts(txns[-1][0]) is not None
                fresh = []
                for ts, n in txns:
                    seen = mon.covered_by_source_ts(ts)
                    fresh.append(((seen if seen is not None else time.time()) - ts / 1000, n))
                done = mon.covered_by_source_ts(txns[-1][0]) or time.time()
                events = sum(n for _, n in txns)
                res = {"offered_rate": rate, "events": events, "feed_s": round(fed, 1),
                       "generator_late_s": round(late, 1), "drained": drained,
                       "p50_s": round(weighted(fresh, 0.5), 1), "p95_s": round(weighted(fresh, 0.95), 1),
                       "max_s": round(max(f for f, _ in fresh), 1),
                       "applied_rate": round(events / max(1e-9, done - t0)) if drained else None,
                       "load_avg_start": round(load0, 2), "load_avg_end": round(os.getloadavg()[0], 2),
                       "cpu_s": {name: round(cpu_seconds(p.pid) - c0, 1)
                                 for name, (p, _), c0 in zip(("capture", "stream"), procs_up, cpu0, strict=True)}}
                res["sustained"] = bool(drained and res["p95_s"] <= args.p95_bound and late < 5)
                results["steps"].append(res)
                progress(f"rate {rate:,}/s: {json.dumps(res)}")
                report.save(results, args.out)
                if not drained:
                    break
        mon.stop()
        results["commits"] = mon.commits
        results["peak_rss_mb"] = {"capture": round(rss[0].stop()), "stream": round(rss[1].stop())}
        results["peak_pss_mb"] = {"capture": round(rss[0].peak_pss_mb), "stream": round(rss[1].peak_pss_mb)}
    finally:
        for p, fh in reversed(procs_up):
            stop(p)
            fh.close()
        pg.remove()
    report.sustained_summary(results)
    return report.finish(results, args.out)


if __name__ == "__main__":
    sys.exit(main())
