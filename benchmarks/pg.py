"""The PostgreSQL side of the capture benchmarks (capture_throughput.py, e2e_postgres.py): a throwaway
PostgreSQL 15 (hudi_cdc.sources.postgres.local) with a `bench` role, its `customers` table filled with
generate_series, and the pipeline file that captures it. The role's password is random and reaches the
CLI through PASSWORD_ENV only (never a file, argv or log)."""

from __future__ import annotations

import secrets
import time
from pathlib import Path

import yaml

PASSWORD_ENV = "HUDI_CDC_BENCH_PGPASSWORD"


def bench_postgres(work: Path) -> tuple[object, str]:
    """A PostgreSQL started under WORK/pg with role `bench` (LOGIN REPLICATION) owning database `bench`:
    (the LocalPostgres, the role's password). The caller removes it (``pg.remove()``), also on failure."""
    import psycopg

    from hudi_cdc.sources.postgres import local as pg_local

    password = secrets.token_hex(12)
    pg = pg_local.LocalPostgres(work / "pg")
    pg.start()
    try:
        with psycopg.connect(pg.dsn(), autocommit=True) as conn:
            conn.execute(f"CREATE ROLE bench LOGIN REPLICATION PASSWORD '{password}'")
            conn.execute("CREATE DATABASE bench OWNER bench")
    except BaseException:
        pg.remove()
        raise
    return pg, password


def load_customers(pg, columns: str, select: str, rows: int) -> float:
    """CREATE TABLE customers (COLUMNS) owned by `bench`, then INSERT ... SELECT SELECT FROM
    generate_series(1, ROWS) g (SELECT's literal % doubled); the seconds the INSERT took."""
    import psycopg

    with psycopg.connect(pg.dsn("bench"), autocommit=True) as conn:
        conn.execute(f"CREATE TABLE customers ({columns})")
        conn.execute("ALTER TABLE customers OWNER TO bench")
        t = time.perf_counter()
        conn.execute(f"INSERT INTO customers SELECT {select} FROM generate_series(1, %s) g", (rows,))
        return time.perf_counter() - t


def write_pipeline(work: Path, port: int, flush_size: int, **table: object) -> Path:
    """WORK/hudi-cdc.yaml capturing bench.public.customers (key customer_id, partitioned by country;
    TABLE: more of its settings) into WORK/landing/topics, lake WORK/lake."""
    config = work / "hudi-cdc.yaml"
    config.write_text(yaml.safe_dump({
        "pipeline": "bench",
        "source": {"root": str(work / "landing" / "topics"),
                   "database": {"host": "127.0.0.1", "port": port, "name": "bench", "user": "bench",
                                "password_env": PASSWORD_ENV, "flush_size": flush_size}},
        "lake": {"root": str(work / "lake")},
        "tables": {"customers": {"topic": "bench.public.customers", "record_key": "customer_id",
                                 "partition_field": "country", **table}}},
        sort_keys=False))
    return config
