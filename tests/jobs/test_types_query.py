"""Typed columns where users query them: a typed table from a real PostgreSQL 15 (real Debezium capture,
hudi-cdc's streamer on the shared SparkSession, its own Hive sync to the stack's real metastore) read
through Hive (the Spark Thrift Server) and through Trino's Hudi connector, value by value against the
database: the Hive schema has date / timestamp / decimal(p,s) / array<...>, and it follows an ADD COLUMN
round. CoW only, table version 6 (what Trino 476 reads; tests/stack/test_trino.py), two rounds, small data."""

from __future__ import annotations

import json
import uuid
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from hudi_cdc.config import load_pipeline
from hudi_cdc.core import render
from hudi_cdc.jobs import streamer
from tests.jobs.test_types_real import _connect, _sql

pytestmark = [pytest.mark.postgres, pytest.mark.spark, pytest.mark.hive, pytest.mark.trino]

RUN = uuid.uuid4().hex[:6]
TABLE = "qt"
DDL = """CREATE TABLE public.qt (id integer PRIMARY KEY, d date, ts timestamp, tstz timestamptz,
    n122 numeric(12,2), nfree numeric, tarr text[], darr date[], b8 bit(8))"""
ROWS = [
    "(1, '2024-01-02', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.654321+05:30', 12.34, 3.14159, "
    "ARRAY['a', NULL, 'c'], ARRAY['2024-01-01', NULL]::date[], B'10110001')",
    "(2, '1999-12-31', '2000-02-29 23:59:59', '2024-06-01 00:00:00+00', -99999.99, -0.5, '{}', NULL, B'00000001')",
    "(3, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
]
# what each column is in Hive (DESCRIBE) and in Trino (the REST column type)
HIVE_TYPES = {"d": "date", "ts": "timestamp", "tstz": "timestamp", "n122": "decimal(12,2)",
              "nfree": "decimal(38,18)", "tarr": "array<string>", "darr": "array<date>", "b8": "string"}
TRINO_TYPES = {"d": "date", "n122": "decimal(12, 2)", "nfree": "decimal(38, 18)", "tarr": "array(varchar)",
               "darr": "array(date)", "b8": "varchar"}
KINDS = {"id": "int", "d": "date", "ts": "ts", "tstz": "ts", "n122": "dec", "nfree": "dec", "tarr": "list:str",
         "darr": "list:date", "b8": "str", "added": "date"}


def _norm(kind: str, v):
    """A value as Hive (strings, JSON arrays), Trino (strings, lists) or psycopg (Python types) gives it,
    in one typed form: dates, UTC wall-clock datetimes, Decimals, lists."""
    if v is None:
        return None
    if kind.startswith("list:"):
        return [_norm(kind[5:], e) for e in (_hive_array(v) if isinstance(v, str) else v)]
    if kind == "date":
        return v if isinstance(v, date) else date.fromisoformat(str(v))
    if kind == "ts":
        if isinstance(v, datetime):
            return v.astimezone(timezone.utc).replace(tzinfo=None) if v.tzinfo else v
        return datetime.fromisoformat(str(v))
    if kind == "dec":
        return Decimal(str(v))
    if kind == "int":
        return int(v)
    return str(v)


def _hive_array(text: str) -> list:
    """An array as the Spark Thrift Server prints it: JSON for strings (`["a",null]`), bare for dates
    (`[2024-01-01,null]`)."""
    try:
        return json.loads(text)
    except ValueError:
        inner = text.strip()[1:-1]
        return [None if e.strip() == "null" else e.strip() for e in inner.split(",")] if inner else []


def _database(db: dict, cols: list[str]) -> dict:
    with _connect(db) as conn:
        conn.execute("SET TIME ZONE 'UTC'")
        rows = conn.execute(f"SELECT {', '.join(c + '::text' if c == 'b8' else c for c in cols)} FROM {TABLE}")
        return {r[0]: {c: _norm(KINDS[c], v) for c, v in zip(cols, r, strict=True)} for r in rows.fetchall()}


def _rows(rows: list[dict], cols: list[str]) -> dict:
    return {int(r["id"]): {c: _norm(KINDS[c], r[c]) for c in cols} for r in rows}


def _run(spark, p, op: str) -> None:
    props_dir = Path(p.base_dir) / "props"
    render.write_properties(p, props_dir)
    props = props_dir / render.props_filename(p, TABLE, "COPY_ON_WRITE")
    flags = render.streamer_flags(p, render.Job(TABLE, "COPY_ON_WRITE", op), f"file://{props}")
    for kv in render.LOCAL_HOODIE_CONF:
        flags += ["--hoodie-conf", kv]
    streamer.run_targets(spark, [streamer.parse_argv(flags)[0]], log=lambda m: None)


def test_hive_and_trino_read_typed_columns_equal_to_the_database(tmp_path, pg_database, spark, hive_stack, trino):
    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.hive import HiveClient

    db = pg_database("types_query")
    _sql(db, DDL, *[f"INSERT INTO {TABLE} VALUES {r}" for r in ROWS], tz="America/New_York")
    hive_db = f"tq_{RUN}"
    cfg = {"pipeline": "tq", "source": {"root": "landing", "database": {**db, "flush_size": 100}},
           "lake": {"root": "lake", "hive_database": hive_db, "hive_metastore": hive_stack.metastore_uri},
           "spark": {"shuffle_partitions": 2},
           "tables": {TABLE: {"topic": f"{db['name']}.public.{TABLE}", "record_key": "id",
                              "table_types": ["COPY_ON_WRITE"]}}}  # hudi.table_version 6 by default
    (tmp_path / "hudi-cdc.yaml").write_text(yaml.safe_dump(cfg, sort_keys=False))
    p = load_pipeline(tmp_path / "hudi-cdc.yaml")
    capture_once(p, progress=lambda m: None, timeout_seconds=300)
    _run(spark, p, "BULK_INSERT")
    hive_table, trino_table = f"{hive_db}_cow.{TABLE}", f"hudi.{hive_db}_cow.{TABLE}"
    cols = ["id", *HIVE_TYPES]

    with HiveClient(hive_stack.host, hive_stack.thrift_port) as hive:
        described = {r["col_name"]: r["data_type"] for r in hive.query(f"DESCRIBE {hive_table}")}
        assert {c: described.get(c) for c in HIVE_TYPES} == HIVE_TYPES
        want = _database(db, cols)
        assert _rows(hive.query(f"SELECT {', '.join(cols)} FROM {hive_table}"), cols) == want

    columns, data, _ = trino.execute(f"SELECT {', '.join(cols)} FROM {trino_table}")
    types = {c["name"]: c["type"] for c in columns}
    assert {c: types[c] for c in TRINO_TYPES} == TRINO_TYPES
    assert types["ts"].startswith("timestamp") and types["tstz"].startswith("timestamp"), types
    trino_rows = _rows([dict(zip([c["name"] for c in columns], r, strict=True)) for r in data], cols)
    assert sorted(trino_rows) == sorted(want)
    for k, row in want.items():
        for c, v in row.items():
            got = trino_rows[k][c]
            if c in ("ts", "tstz") and v is not None and got is not None:
                # the connector's timestamp precision: milliseconds by default (micros rounded)
                assert abs((got - v).total_seconds()) < 0.001, (k, c, got, v)
            else:
                assert got == v, (k, c, got, v)

    # ADD COLUMN: the next round adds it to the lake, the Hive table and what Trino reads
    _sql(db, f"ALTER TABLE {TABLE} ADD COLUMN added date",
         f"UPDATE {TABLE} SET added = '2030-01-01', n122 = 0.01 WHERE id = 1",
         f"INSERT INTO {TABLE} (id, d, added) VALUES (4, '2024-02-29', '1970-01-01')")
    capture_once(p, progress=lambda m: None, timeout_seconds=300)
    _run(spark, p, "UPSERT")
    cols2 = [*cols, "added"]
    with HiveClient(hive_stack.host, hive_stack.thrift_port) as hive:
        hive.query(f"REFRESH TABLE {hive_table}")
        described = {r["col_name"]: r["data_type"] for r in hive.query(f"DESCRIBE {hive_table}")}
        assert described.get("added") == "date" and described.get("d") == "date"
        want = _database(db, cols2)
        assert _rows(hive.query(f"SELECT {', '.join(cols2)} FROM {hive_table}"), cols2) == want
    got = _rows(trino.query(f"SELECT id, d, added FROM {trino_table}"), ["id", "d", "added"])
    assert got == {k: {c: v[c] for c in ("id", "d", "added")} for k, v in want.items()}
