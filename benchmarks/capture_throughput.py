"""Benchmark: `hudi-cdc capture --once` throughput, PostgreSQL -> Debezium (embedded) -> S3-sink Avro files.

A throwaway PostgreSQL 15 (hudi_cdc.sources.postgres.local), a `customers` table of --rows rows, then three
whole `hudi-cdc capture --once` processes, each timed from start to exit (JVM start included) and with
the rate capture itself reports (events over its own engine time):
  1. the snapshot of every row;
  2. one UPDATE of every row (streaming from the WAL);
  3. nothing new (the fixed cost of a run).

    python -m benchmarks.capture_throughput [--rows 200000] [--flush-size 10000] [--work DIR]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):  # python benchmarks/capture_throughput.py
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    __package__ = "benchmarks"

from benchmarks import pg as bench_pg  # noqa: E402
from benchmarks import procs  # noqa: E402


def _capture(config: Path, env: dict) -> dict:
    t = time.perf_counter()
    proc = subprocess.run(procs.hudi_cdc("--config", str(config), "capture", "--once", "-o", "json"),
                          env=env, capture_output=True, text=True, cwd=config.parent)
    wall = time.perf_counter() - t
    if proc.returncode != 0:
        raise SystemExit(f"capture failed (exit {proc.returncode}): {proc.stderr.strip().splitlines()[-1:]}")
    out = json.loads(proc.stdout)
    return {"wall_s": round(wall, 1), "events": out["events"], "files": out["files"],
            "engine_s": out["seconds"], "events_per_s": out["events_per_second"],
            "events_per_s_wall": round(out["events"] / wall) if wall else None}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=200_000)
    ap.add_argument("--flush-size", type=int, default=10_000)
    ap.add_argument("--work", type=Path, default=None)
    args = ap.parse_args(argv)

    import psycopg

    work = args.work or Path(tempfile.mkdtemp(prefix="hudi-cdc-capture-bench-", dir="/tmp"))
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o755)
    pg, password = bench_pg.bench_postgres(work)
    env = {**procs.env(), bench_pg.PASSWORD_ENV: password}
    try:
        load_s = bench_pg.load_customers(pg, "customer_id bigint PRIMARY KEY, name text, country text, "
                                         "balance numeric(12,2), updated_at timestamp",
                                         "g, 'customer ' || g, 'C' || (g %% 20), g * 0.01, now()", args.rows)
        config = bench_pg.write_pipeline(work, pg.port, args.flush_size)
        snapshot = _capture(config, env)
        with psycopg.connect(pg.dsn("bench"), autocommit=True) as conn:
            conn.execute("UPDATE customers SET balance = balance + 1, updated_at = now()")
        streaming = _capture(config, env)
        idle = _capture(config, env)
        report = {"rows": args.rows, "flush_size": args.flush_size, "load_s": round(load_s, 1),
                  "snapshot": snapshot, "streaming_update_of_every_row": streaming, "nothing_new": idle,
                  "load_average": os.getloadavg()}
        print(json.dumps(report, indent=2))
    finally:
        pg.remove()
    return 0


if __name__ == "__main__":
    sys.exit(main())
