"""Benchmark: `hudi-cdc capture --once` throughput, PostgreSQL -> Debezium (embedded) -> S3-sink Avro files.

A throwaway PostgreSQL 15 (hudi_cdc.capture.pg_local), a `customers` table of --rows rows, then three
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
import secrets
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
PASSWORD_ENV = "HUDI_CDC_BENCH_PGPASSWORD"


def _capture(config: Path, env: dict) -> dict:
    t = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "hudi_cdc.cli", "--config", str(config), "capture", "--once",
                           "-o", "json"], env=env, capture_output=True, text=True, cwd=config.parent)
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

    from hudi_cdc.capture import pg_local

    work = args.work or Path(tempfile.mkdtemp(prefix="hudi-cdc-capture-bench-", dir="/tmp"))
    work.mkdir(parents=True, exist_ok=True)
    os.chmod(work, 0o755)
    password = secrets.token_hex(12)
    env = {**os.environ, PASSWORD_ENV: password, "PYTHONPATH": str(ROOT)}
    pg = pg_local.LocalPostgres(work / "pg")
    pg.start()
    try:
        with psycopg.connect(pg.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE ROLE bench LOGIN REPLICATION PASSWORD '{password}'")
            conn.execute("CREATE DATABASE bench OWNER bench")
        with psycopg.connect(pg.dsn("bench"), autocommit=True) as conn:
            conn.execute("CREATE TABLE customers (customer_id bigint PRIMARY KEY, name text, country text, "
                         "balance numeric(12,2), updated_at timestamp)")
            conn.execute("ALTER TABLE customers OWNER TO bench")
            t = time.perf_counter()
            conn.execute("INSERT INTO customers SELECT g, 'customer ' || g, 'C' || (g %% 20), g * 0.01, "
                         "now() FROM generate_series(1, %s) g", (args.rows,))
            load_s = time.perf_counter() - t
        config = work / "hudi-cdc.yaml"
        config.write_text(yaml.safe_dump({
            "pipeline": "bench",
            "source": {"root": str(work / "landing" / "topics"),
                       "database": {"host": "127.0.0.1", "port": pg.port, "name": "bench", "user": "bench",
                                    "password_env": PASSWORD_ENV, "flush_size": args.flush_size}},
            "lake": {"root": str(work / "lake")},
            "tables": {"customers": {"topic": "bench.public.customers", "record_key": "customer_id",
                                     "partition_field": "country"}}}, sort_keys=False))
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
