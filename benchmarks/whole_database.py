"""A whole database under one `hudi-cdc run` (issue 38): many tables, a few hot, many trickling, the rest idle
(some empty at the start), from `init --from-database` to per-table freshness.

    python -m benchmarks.whole_database --tables 200 --hot 10 --trickle 130 --hot-rate 2000 --minutes 10
        [--empty 10] [--rows 1000] [--big 4 --big-rows 1000000] [--type mor] [--work /work/bench-data/whole]
        [--out results.json]

A throwaway PostgreSQL 15 (benchmarks/pg.py) gets --tables tables of mixed shapes (keys int, bigint or text;
one table in ten wide, 30 columns; one in four partitioned by a 10-value column), --rows rows each except
--big of them (--big-rows rows: the first trickling and idle tables, alternately) and --empty of them (half
trickling, half idle: empty at the start); then, as a user does it, `init
--from-database`, `capture --once`, `bootstrap` (timed) and `run` (capture and `stream --all` in one command)
while a generator commits, every second, --hot-rate / --hot updates to each hot table (one transaction per
table) and, every --trickle-every seconds, one change to each trickling table (staggered; an empty table
gets inserts). Each table's timeline is watched (a commit seen -> the newest source event time it applied,
hudi-cdc's commit metadata); a transaction is fresh when a commit of its table covers its COMMIT's wall time.

Reports, per group (hot, trickle, idle): per-table p50/p95 freshness (worst and median table), the hot tables'
applied rate, commits and files per table per hour, CPU seconds of `run`'s process tree per applied event,
its peak PSS, and how long `status` and `report` take over every table afterwards.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sys
import threading
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

import yaml  # noqa: E402

from benchmarks import pg as bench_pg  # noqa: E402
from benchmarks import procs, report  # noqa: E402
from benchmarks.procs import cpu_seconds, start, stop  # noqa: E402
from benchmarks.sustained import weighted  # noqa: E402

KEYS = ("int", "bigint", "text")


def progress(msg: str) -> None:
    print(f"[whole {time.strftime('%H:%M:%S')}] {msg}", file=sys.stderr, flush=True)


def cli(config: Path, *args: str) -> list[str]:
    return procs.hudi_cdc("--config", str(config), *args)


def shapes(n: int, hot: int, trickle: int, empty: int, big: int = 0) -> list[dict]:
    """Each table: name, group (hot | trickle | idle), key type, wide, partitioned, empty at the start, big (the
    first trickling and idle tables, alternately, get --big-rows rows)."""
    out = []
    empty_trickle = set(range(hot + trickle - empty // 2, hot + trickle))
    empty_idle = set(range(n - (empty - empty // 2), n))
    big_ones = {(hot + i // 2) if i % 2 == 0 else (hot + trickle + i // 2) for i in range(big)}
    for i in range(n):
        group = "hot" if i < hot else "trickle" if i < hot + trickle else "idle"
        out.append({"name": f"t{i:03d}", "group": group, "key": KEYS[i % 3], "wide": i % 10 == 9,
                    "partitioned": i % 4 == 1, "empty": i in empty_trickle or i in empty_idle,
                    "big": i in big_ones})
    return out


def _key(t: dict, i: int) -> str:
    return f"'k{i}'" if t["key"] == "text" else str(i)


def create_tables(conn, tables: list[dict], rows: int, big_rows: int = 0) -> None:
    for t in tables:
        extra = ", ".join(f"c{j} text" for j in range(25)) if t["wide"] else "note text"
        conn.execute(f"CREATE TABLE {t['name']} (id {t['key']} PRIMARY KEY, region text, amount bigint, "
                     f"updated timestamptz DEFAULT now(), {extra})")
        conn.execute(f"ALTER TABLE {t['name']} OWNER TO bench")
        if not t["empty"]:
            key = "'k' || g" if t["key"] == "text" else "g"
            conn.execute(f"INSERT INTO {t['name']} (id, region, amount) SELECT {key}, 'r' || (g % 10), g "
                         f"FROM generate_series(1, {big_rows if t['big'] else rows}) g")


def configure(config: Path, tables: list[dict], table_type: str, java_options: str | None = None,
              spark_conf: list[str] | None = None) -> None:
    doc = yaml.safe_load(config.read_text())
    by = {t["name"]: t for t in tables}
    for name, entry in doc["tables"].items():
        entry["table_types"] = [table_type]
        if by[name]["partitioned"]:
            entry["partition_field"] = "region"
    doc["stream"] = {**doc.get("stream", {}), "min_sync_interval_seconds": 1, "stop_timeout_seconds": 600}
    # KEY=VALUE settings of the pipeline's spark.conf, and the driver JVM's flags instead of hudi-cdc's
    # (render.JAVA_OPTIONS): a variant of hudi-cdc's own
    extra = dict(kv.split("=", 1) for kv in spark_conf or [])
    if java_options:
        extra["spark.driver.extraJavaOptions"] = java_options
    if extra:
        spark = doc.setdefault("spark", {})
        spark["conf"] = {**spark.get("conf", {}), **extra}
    config.write_text(yaml.safe_dump(doc, sort_keys=False))


class Watch:
    """Every table's timeline, polled once a second: (seen, newest source event time) per new commit."""

    def __init__(self, lake: Path, names: list[str], suffix: str):
        from hudi_cdc.common.instants import completed_writes_of

        self.writes, self.lake, self.suffix = completed_writes_of, lake, suffix
        self.seen = {n: set(self._names(n)) for n in names}
        self.base = {n: len(s) for n, s in self.seen.items()}
        self.commits: dict[str, list[tuple[float, int]]] = {n: [] for n in names}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _names(self, n: str) -> list[str]:
        hoodie = self.lake / f"{n}_{self.suffix}" / ".hoodie"
        for d in (hoodie / "timeline", hoodie):
            try:
                return [i.file_name for i in self.writes(os.listdir(d))]
            except FileNotFoundError:
                continue
        return []

    def _newest_ts(self, n: str) -> int | None:
        from hudi_cdc.common import checkpoints, s3

        tl = s3.hudi_table_builder(str(self.lake / f"{n}_{self.suffix}")).build().get_timeline()
        instants = sorted(list(tl.get_completed_commits()) + list(tl.get_completed_deltacommits()),
                          key=lambda i: i.timestamp, reverse=True)
        for inst in instants:
            ts = checkpoints.extra_metadata(json.loads(tl.get_instant_metadata_in_json(inst) or "{}")).get(
                checkpoints.SOURCE_TS_KEY)
            if ts:
                return int(ts)
        return None

    def _loop(self) -> None:
        while not self._stop.is_set():
            for n, seen in self.seen.items():
                new = [x for x in self._names(n) if x not in seen]
                if new:
                    now = time.time()
                    seen.update(new)
                    try:
                        ts = self._newest_ts(n)
                    except Exception:  # noqa: BLE001 - a commit being written: the next poll reads it
                        seen.difference_update(new)
                        continue
                    if ts is not None:
                        self.commits[n].append((now, ts))
            self._stop.wait(1.0)

    def covered(self, n: str, ts_ms: int) -> float | None:
        return next((seen for seen, ts in self.commits[n] if ts >= ts_ms), None)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(10)


def generate(conn, tables: list[dict], args, stop_at: float, rows: int) -> dict[str, list[tuple[int, int]]]:
    """The load: (wall ms before COMMIT, rows) per transaction, per table."""
    hot = [t for t in tables if t["group"] == "hot"]
    trickle = [t for t in tables if t["group"] == "trickle"]
    per_hot = max(1, args.hot_rate // max(1, len(hot)))
    txns: dict[str, list[tuple[int, int]]] = {t["name"]: [] for t in tables}
    nxt = {t["name"]: 1 for t in tables}
    inserted = {t["name"]: rows if not t["empty"] else 0 for t in tables}
    rng = random.Random(7)
    offset = {t["name"]: rng.uniform(0, args.trickle_every) for t in trickle}
    t0, sec = time.time(), 0
    while time.time() < stop_at:
        delay = t0 + sec - time.time()
        if delay > 0:
            time.sleep(delay)
        for t in hot:
            lo = nxt[t["name"]]
            hi = lo + per_hot - 1
            if hi > rows:
                lo, hi = 1, per_hot
            nxt[t["name"]] = hi + 1
            keys = ", ".join(_key(t, i) for i in range(lo, hi + 1))
            conn.execute(f"UPDATE {t['name']} SET amount = amount + 1, updated = now() WHERE id IN ({keys})")
            txns[t["name"]].append((int(time.time() * 1000), per_hot))
            conn.commit()
        for t in trickle:
            if (sec - offset[t["name"]]) % args.trickle_every >= 1 or sec < offset[t["name"]]:
                continue
            n = t["name"]
            if inserted[n] < 5:  # an empty table fills first
                inserted[n] += 1
                conn.execute(f"INSERT INTO {n} (id, region, amount) VALUES ({_key(t, inserted[n])}, 'r1', 1)")
            else:
                k = rng.randint(1, min(inserted[n], rows))
                conn.execute(f"UPDATE {n} SET amount = amount + 1, updated = now() WHERE id = {_key(t, k)}")
            txns[n].append((int(time.time() * 1000), 1))
            conn.commit()
        sec += 1
    return txns


def summarize(tables: list[dict], txns, watch: Watch, lake: Path, suffix: str, seconds: float) -> dict:
    out: dict = {}
    for group in ("hot", "trickle", "idle"):
        names = [t["name"] for t in tables if t["group"] == group]
        p50s, p95s, unseen = [], [], 0
        for n in names:
            fresh = []
            for ts, rows in txns[n]:
                seen = watch.covered(n, ts)
                unseen += seen is None
                fresh.append(((seen if seen is not None else time.time()) - ts / 1000, rows))
            if fresh:
                p50s.append(weighted(fresh, 0.5))
                p95s.append(weighted(fresh, 0.95))
        commits = [len(watch.seen[n]) - watch.base[n] for n in names]
        files = [sum(1 for p in (lake / f"{n}_{suffix}").rglob("*") if p.is_file() and ".hoodie" not in p.parts)
                 for n in names]
        hours = seconds / 3600
        out[group] = {"tables": len(names), "transactions_unseen": unseen,
                      "p50_s_median_table": round(sorted(p50s)[len(p50s) // 2], 1) if p50s else None,
                      "p95_s_median_table": round(sorted(p95s)[len(p95s) // 2], 1) if p95s else None,
                      "p95_s_worst_table": round(max(p95s), 1) if p95s else None,
                      "commits_per_table_hour": round(sum(commits) / max(1, len(names)) / hours, 1),
                      "data_files_per_table": round(sum(files) / max(1, len(names)), 1)}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--hot", type=int, default=10)
    ap.add_argument("--trickle", type=int, default=130)
    ap.add_argument("--empty", type=int, default=10)
    ap.add_argument("--rows", type=int, default=1000)
    ap.add_argument("--big", type=int, default=4, help="tables (trickling and idle, alternately) of --big-rows rows")
    ap.add_argument("--big-rows", type=int, default=1_000_000)
    ap.add_argument("--hot-rate", type=int, default=2000, help="changes/s over all hot tables")
    ap.add_argument("--trickle-every", type=float, default=5.0, help="seconds between a trickling table's changes")
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--drain-seconds", type=float, default=300)
    ap.add_argument("--type", choices=["cow", "mor"], default="mor")
    ap.add_argument("--work", default="/work/bench-data/whole")
    ap.add_argument("--java-options", help="the driver JVM's flags instead of hudi-cdc's own")
    ap.add_argument("--spark-conf", action="append", metavar="KEY=VALUE",
                    help="a Spark setting of the pipeline (repeatable), e.g. spark.sql.codegen.cache.maxEntries=100")
    ap.add_argument("--out")
    args = ap.parse_args(argv)
    return run(args, argv)


def run(args, argv) -> int:
    import psycopg

    work = procs.fresh_work(args.work)
    logs = work / "logs"
    logs.mkdir()
    tables = shapes(args.tables, args.hot, args.trickle, args.empty, args.big)
    table_type = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}[args.type]
    given = argv if argv is not None else sys.argv[1:]
    res: dict = {"command": "python -m benchmarks.whole_database " + " ".join(given),
                 "machine": report.machine(), "tables": args.tables, "hot": args.hot, "trickle": args.trickle,
                 "empty_at_start": args.empty}
    pg, password = bench_pg.bench_postgres(work)
    env = {**procs.env(), bench_pg.PASSWORD_ENV: password}
    up: list = []
    try:
        with psycopg.connect(pg.dsn("bench"), autocommit=True) as conn:
            create_tables(conn, tables, args.rows, args.big_rows)
        res["source_rows"] = sum(0 if t["empty"] else args.big_rows if t["big"] else args.rows for t in tables)
        project = work / "p"
        m = procs.run(procs.hudi_cdc("init", str(project), "--from-database", "--dbname", "bench", "--user", "bench",
                                     "--host", "127.0.0.1", "--port", str(pg.port), "--password-env",
                                     bench_pg.PASSWORD_ENV), logs / "init.log", extra_env=env)
        res["init_s"] = round(m.seconds, 1)
        config = project / "hudi-cdc.yaml"
        configure(config, tables, table_type, args.java_options, args.spark_conf)
        for step, argv_ in (("capture_once", ("capture", "--once")), ("bootstrap", ("bootstrap",))):
            m = procs.run(cli(config, *argv_), logs / f"{step}.log", extra_env=env, timeout=7200, cwd=project)
            res[f"{step}_s"] = round(m.seconds, 1)
            progress(f"{step}: {m.seconds:.1f}s")
        from hudi_cdc.config import load_pipeline

        lake = Path(load_pipeline(config).lake_root.replace("file://", ""))
        watch = Watch(lake, [t["name"] for t in tables], args.type)
        runp = start(cli(config, "run", "--rotate-seconds", "1"), logs / "run.log", env)
        up.append(runp)
        peak = procs.PeakRss(runp[0].pid)
        time.sleep(20)  # the application's first rounds (every table's checkpoint read once)
        cpu0, t0, threads0 = cpu_seconds(runp[0].pid), time.time(), procs.thread_cpu(runp[0].pid)
        with psycopg.connect(pg.dsn("bench")) as conn:
            txns = generate(conn, tables, args, t0 + args.minutes * 60, args.rows)
        fed = time.time() - t0
        last = {n: v[-1][0] for n, v in txns.items() if v}
        deadline = time.time() + args.drain_seconds
        while time.time() < deadline and any(watch.covered(n, ts) is None for n, ts in last.items()):
            if runp[0].poll() is not None:
                raise RuntimeError(f"run exited {runp[0].returncode}; logs in {logs}")
            time.sleep(2)
        elapsed = time.time() - t0
        cpu = cpu_seconds(runp[0].pid) - cpu0
        res["cpu_s_by_thread"] = procs.thread_cpu_delta(threads0, procs.thread_cpu(runp[0].pid))
        watch.stop()
        events = sum(n for v in txns.values() for _, n in v)
        hot_events = sum(n for t in tables if t["group"] == "hot" for _, n in txns[t["name"]])
        res.update({"feed_s": round(fed, 1), "events": events, "hot_offered_rate": round(hot_events / fed),
                    "cpu_s_per_event": round(cpu / max(1, events), 4), "cpu_s": round(cpu, 1),
                    "groups": summarize(tables, txns, watch, lake, args.type, elapsed)})
        stop(runp[0])
        runp[1].close()
        up.clear()
        peak.stop()
        res["peak_pss_mb"] = round(peak.peak_pss_mb)
        for what, argv_ in (("status", ("status", "-o", "json")), ("report", ("report", "--out", str(work / "r")))):
            m = procs.run(cli(config, *argv_), logs / f"{what}.log", extra_env=env, check=False, cwd=project)
            res[f"{what}_s"] = round(m.seconds, 2)
        progress(json.dumps(res))
    finally:
        for p, fh in up:
            stop(p)
            fh.close()
        pg.remove()
    return report.finish(res, args.out)


if __name__ == "__main__":
    sys.exit(main())
