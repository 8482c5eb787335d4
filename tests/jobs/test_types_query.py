"""Every reader a user has, side by side on one lake (issue 37, item 3): a typed table from a real
PostgreSQL 15, as a new user makes it (`hudi-cdc init --from-database`, `capture --once` with real Debezium,
`bootstrap`, `stream --all --once`: hudi-cdc's streamer on the shared SparkSession, its own Hive sync to
the stack's real metastore), CoW and MoR on the pipeline's default table version (6), after a bootstrap, a
round with a TRUNCATE, and a round with ADD COLUMN, updates, a partition move and deletes. Read by hudi-rs,
Spark + Hudi 1.2.0 (the shared session), Spark 3.5 + Hudi 1.0.2 (EMR 7's) and Spark 3.4 + Hudi 0.14.0
(Athena's) (one spark-submit each, tests/plugins/hudi_readers.py), HiveServer2 (the stack's Spark Thrift
Server) and Trino 483, value by value against the database in the types each reader gives: the snapshot
(CoW, MoR `_rt`) equals the database, the MoR read-optimized view (`_ro`) the base files' state. What a
reader cannot show is asserted as it is (docs/query-the-lake.md): Trino's `_rt` is the read-optimized view,
its timestamps are milliseconds. The Hive and Trino column types are checked too."""

from __future__ import annotations

import json
import uuid
from collections import Counter
from datetime import date, datetime, timedelta, timezone
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from hudi_cdc.config import load_pipeline
from hudi_cdc.lake.reader import read_table
from tests.cli import run_main
from tests.jobs.test_types_real import _connect, _sql
from tests.plugins.hudi_readers import runtime, start_reads

pytestmark = [pytest.mark.postgres, pytest.mark.spark, pytest.mark.hive, pytest.mark.trino, pytest.mark.deltastreamer,
              pytest.mark.readers]

RUN = uuid.uuid4().hex[:6]
TABLE = "qt"
TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")
DDL = """CREATE TABLE public.qt (id integer PRIMARY KEY, grp text NOT NULL, d date, ts timestamp,
    tstz timestamptz, n122 numeric(12,2), nfree numeric, tarr text[], darr date[], b8 bit(8))"""
ROWS = [
    "(1, 'a', '2024-01-02', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.654321+05:30', 12.34, 3.14159, "
    "ARRAY['a', NULL, 'c'], ARRAY['2024-01-01', NULL]::date[], B'10110001')",
    "(2, 'a', '1999-12-31', '2000-02-29 23:59:59', '2024-06-01 00:00:00+00', -99999.99, -0.5, '{}', NULL, "
    "B'00000001')",
    "(3, 'b', NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
]
# what each column is in Hive (DESCRIBE) and in Trino (the REST column type)
HIVE_TYPES = {"d": "date", "ts": "timestamp", "tstz": "timestamp", "n122": "decimal(12,2)",
              "nfree": "decimal(38,18)", "tarr": "array<string>", "darr": "array<date>", "b8": "string",
              "added": "date"}
TRINO_TYPES = {"d": "date", "n122": "decimal(12, 2)", "nfree": "decimal(38, 18)", "tarr": "array(varchar)",
               "darr": "array(date)", "b8": "varchar", "added": "date"}
KINDS = {"id": "int", "grp": "str", "d": "date", "ts": "ts", "tstz": "ts", "n122": "dec", "nfree": "dec",
         "tarr": "list:str", "darr": "list:date", "b8": "str", "added": "date"}
COLS = list(KINDS)


def _norm(kind: str, v, ms: bool = False):
    """A value as Hive (strings, JSON arrays), Trino (strings, lists), Spark (Python types; timestamps
    as UTC strings), hudi-rs or psycopg gives it, in one hashable typed form: dates, UTC wall-clock
    datetimes (rounded to milliseconds with `ms`: what Trino's connector shows), Decimals, tuples."""
    if v is None:
        return None
    if kind.startswith("list:"):
        return tuple(_norm(kind[5:], e) for e in (_hive_array(v) if isinstance(v, str) else v))
    if kind == "date":
        return v if isinstance(v, date) else date.fromisoformat(str(v))
    if kind == "ts":
        if isinstance(v, datetime):
            v = v.astimezone(timezone.utc).replace(tzinfo=None) if v.tzinfo else v
        else:
            v = datetime.fromisoformat(str(v))
        return v.replace(microsecond=0) + timedelta(milliseconds=round(v.microsecond / 1000)) if ms else v
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


def _state(rows, ms: bool = False) -> Counter:
    """Rows (dicts; a column a reader does not have is NULL) as a multiset of normalised tuples."""
    if isinstance(rows, dict):  # a Spark runtime's refusal: {"error": ...}
        return rows
    return Counter(tuple(_norm(KINDS[c], r.get(c), ms) for c in COLS) for r in rows)


def _database(db: dict) -> list[dict]:
    with _connect(db) as conn:
        conn.execute("SET TIME ZONE 'UTC'")
        have = {r[0] for r in conn.execute(f"SELECT column_name FROM information_schema.columns "
                                           f"WHERE table_name = '{TABLE}'").fetchall()}
        cols = [c for c in COLS if c in have]
        rows = conn.execute(f"SELECT {', '.join(c + '::text' if c == 'b8' else c for c in cols)} FROM {TABLE}")
        return [dict(zip(cols, r, strict=True)) for r in rows.fetchall()]


def _pipeline(tmp_path, db: dict, metastore_uri: str):
    """The pipeline file as a new user gets it, `hudi-cdc init --from-database` (the table version left at
    its default, with init's comment on who reads what); then this test's choices: both table types, its
    own metastore database, small Spark settings."""
    d = tmp_path / "p"
    run_main("init", str(d), "--from-database", "--dbname", db["name"], "--user", db["user"], "--host", db["host"],
             "--port", str(db["port"]), "--password-env", db["password_env"], "--metastore", metastore_uri,
             "--table", TABLE, "--partition-field", f"{TABLE}=grp", cwd=tmp_path)
    text = (d / "hudi-cdc.yaml").read_text()
    assert "table_version: 6" in text and "Athena" in text, text  # the default, and who reads it
    doc = yaml.safe_load(text)
    doc["lake"]["hive_database"] = f"tq_{RUN}"
    doc["spark"] = {"master": "local[2]", "driver_memory": "1g", "shuffle_partitions": 2}
    doc["tables"][TABLE]["table_types"] = list(TYPES)
    (d / "hudi-cdc.yaml").write_text(yaml.safe_dump(doc, sort_keys=False))
    p = load_pipeline(d / "hudi-cdc.yaml")
    assert p.hudi.writes_table_version == 6 and p.tables[TABLE].partition_field == "grp"
    return p, lambda *args: run_main("-c", str(d / "hudi-cdc.yaml"), *args, cwd=d)


def _spark_rows(spark, path: str, query_type: str) -> list[dict]:
    """Hudi 1.2.0 on the shared session (UTC): timestamps formatted as the other Spark readers give them."""
    from pyspark.sql import functions as F

    df = spark.read.format("hudi").option("hoodie.datasource.query.type", query_type).load(path)
    df = df.select([F.date_format(F.col(f.name), "yyyy-MM-dd HH:mm:ss.SSSSSS").alias(f.name)
                    if f.dataType.typeName() == "timestamp" else F.col(f.name) for f in df.schema.fields])
    return [r.asDict(recursive=True) for r in df.collect()]


def _read_all(tmp_path, spark, hive_stack, trino, p) -> dict[tuple[str, str], Counter]:
    """{(reader, view): rows as a multiset (or a Spark runtime's {"error": ...})}, views cow | rt | ro."""
    cow, mor = p.base_path(TABLE, "COPY_ON_WRITE"), p.base_path(TABLE, "MERGE_ON_READ")
    paths = {"cow": (cow, "snapshot"), "rt": (mor, "snapshot"), "ro": (mor, "read_optimized")}
    others = start_reads(tmp_path, {v: list(paths.values()) for v in ("1.0.2", "0.14.0")})  # their JVMs start now
    try:
        seen = _read_in_process(spark, hive_stack, trino, p, paths)
    except BaseException:
        others.kill()
        raise
    for version, got in others.collect().items():
        for view, read in paths.items():
            seen[f"spark-hudi-{version}", view] = _state(got[read])
    return seen


def _read_in_process(spark, hive_stack, trino, p, paths: dict) -> dict[tuple[str, str], Counter]:
    """hudi-rs, Spark + Hudi 1.2.0 (the shared session), HiveServer2 and Trino; the column types of the last two."""
    from hudi_cdc.hive import HiveClient

    seen: dict[tuple[str, str], Counter] = {}
    for view, (path, q) in paths.items():
        seen["hudi-rs", view] = _state(read_table(path, read_optimized=q == "read_optimized"))
        seen["spark-1.2.0", view] = _state(_spark_rows(spark, path, q))
    hive_db = p.lake.hive_database
    tables = {"cow": f"{hive_db}_cow.{TABLE}", "rt": f"{hive_db}_mor.{TABLE}_rt", "ro": f"{hive_db}_mor.{TABLE}_ro"}
    select = ", ".join(COLS)
    with HiveClient(hive_stack.host, hive_stack.thrift_port) as hive:
        for view, table in tables.items():
            hive.query(f"REFRESH TABLE {table}")
            described = {r["col_name"]: r["data_type"] for r in hive.query(f"DESCRIBE {table}")}
            assert {c: described.get(c) for c in HIVE_TYPES} == HIVE_TYPES, table
            seen["hive", view] = _state(hive.query(f"SELECT {select} FROM {table}"))
    for view, table in tables.items():
        columns, data, _ = trino.execute(f"SELECT {select} FROM hudi.{table}")
        types = {c["name"]: c["type"] for c in columns}
        assert {c: types[c] for c in TRINO_TYPES} == TRINO_TYPES, table
        assert types["ts"].startswith("timestamp") and types["tstz"].startswith("timestamp"), types
        seen["trino", view] = _state([dict(zip(COLS, r, strict=True)) for r in data], ms=True)
    return seen


def test_every_reader_reads_the_lake_equal_to_the_database(tmp_path, pg_database, spark, hive_stack, trino,
                                                           inprocess_jobs):
    for version in ("1.0.2", "0.14.0"):
        runtime(version)  # a missing reader runtime is named (and skipped, or failed under CI) before any work
    db = pg_database("types_query")
    _sql(db, DDL, *[f"INSERT INTO {TABLE} VALUES {r}" for r in ROWS],
         f"INSERT INTO {TABLE} (id, grp, n122) VALUES (5, 'b', 5)", tz="America/New_York")
    p, cli = _pipeline(tmp_path, db, hive_stack.metastore_uri)
    cli("capture", "--once", "--timeout", "300")
    cli("bootstrap")

    # TRUNCATE: what was before it goes (key 5, the update), what comes after it stays
    _sql(db, f"UPDATE {TABLE} SET n122 = 6 WHERE id = 5", f"TRUNCATE {TABLE}",
         *[f"INSERT INTO {TABLE} VALUES {r}" for r in ROWS], f"INSERT INTO {TABLE} (id, grp, d) VALUES (4, 'a', "
         "'2024-02-29')", tz="America/New_York")
    cli("capture", "--once", "--timeout", "300")
    cli("stream", "--all", "--once")
    truncated = _database(db)
    assert sorted(r["id"] for r in truncated) == [1, 2, 3, 4]
    for tt in TYPES:
        assert _state(read_table(p.base_path(TABLE, tt))) == _state(truncated), tt

    # ADD COLUMN, updates (typed values, arrays with NULLs), a partition move (2: a -> b), a delete, an insert
    _sql(db, f"ALTER TABLE {TABLE} ADD COLUMN added date",
         f"UPDATE {TABLE} SET added = '2030-01-01', n122 = 0.01, tarr = ARRAY[NULL, 'z'] WHERE id = 1",
         f"UPDATE {TABLE} SET grp = 'b', ts = '2001-01-01 00:00:00.000001' WHERE id = 2",
         f"DELETE FROM {TABLE} WHERE id = 3",
         f"INSERT INTO {TABLE} (id, grp, d, added) VALUES (6, 'b', '2024-02-29', '1970-01-01')")
    cli("capture", "--once", "--timeout", "300")
    cli("stream", "--all", "--once")
    final = _database(db)
    # the round after a TRUNCATE is an ordinary one (it once re-read the truncate round's files and overwrote
    # the table again: the checkpoint of a replacecommit went unread): MoR changes wait in log files
    hoodie = Path(p.base_path(TABLE, "MERGE_ON_READ").removeprefix("file://")) / ".hoodie"
    assert len(list(hoodie.glob("*.deltacommit"))) == 1 and len(list(hoodie.glob("*.replacecommit"))) == 1
    # the ordering field under the key readers before Hudi 1.1 read (Hudi 1.0.2's MoR snapshot needs it:
    # common/reader_keys.py), beside 1.1's, on the default table version
    for tt in TYPES:
        config = (Path(p.base_path(TABLE, tt).removeprefix("file://")) / ".hoodie" / "hoodie.properties").read_text()
        assert all(kv in config.splitlines() for kv in ("hoodie.table.version=6", "hoodie.table.precombine.field=__lsn",
                                                         "hoodie.table.ordering.fields=__lsn")), config
    assert inprocess_jobs == ["session"] * 3  # the bootstrap and two rounds, on the shared session
    seen = _read_all(tmp_path, spark, hive_stack, trino, p)
    report = "\n".join(f"{k}: {sorted(map(repr, v.elements())) if isinstance(v, Counter) else v}"
                       for k, v in seen.items())

    # the read-optimized view: the base files, i.e. the state the TRUNCATE round left (no `added` yet);
    # the round after it is in the MoR table's log files only
    want = {"cow": _state(final), "rt": _state(final), "ro": _state(truncated)}
    assert want["rt"] != want["ro"]
    # Trino: `_rt` is read as `_ro` (base files only), timestamps in milliseconds
    want_ms = {"cow": _state(final, ms=True), "rt": _state(truncated, ms=True), "ro": _state(truncated, ms=True)}
    readers = {"hudi-rs", "spark-1.2.0", "hive", "trino", "spark-hudi-1.0.2", "spark-hudi-0.14.0"}
    assert {r for r, _ in seen} == readers and len(seen) == 3 * len(readers)
    for (reader, view), got in seen.items():
        assert got == (want_ms if reader == "trino" else want)[view], f"{reader} {view}\n{report}"
