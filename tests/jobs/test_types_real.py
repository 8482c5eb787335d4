"""A typed lake from a real PostgreSQL 15 through real Debezium and hudi-cdc's streamer (CoW and MoR):
every type of docs/types.md, snapshot rows and streamed INSERT/UPDATE rows, arrays with NULL elements,
infinity dates, BC dates, negative and large numerics, timestamps with microseconds, timestamptz written
in a non-UTC session. The lake is read back with hudi-rs and Spark and compared with the database by key
and column in typed form; `verify` agrees, and finds a corrupted value, a NaN Debezium sent as NULL and
the raw encodings of a table bootstrapped before typed columns.

One module-scoped scenario (one PostgreSQL cluster, captures in this process, rounds in-process on the
shared SparkSession) feeds the tests; they run in file order, the last ones change the database.
"""

from __future__ import annotations

import os
from datetime import date, datetime, timezone
from decimal import Decimal
from pathlib import Path

import pytest
import yaml

from hudi_cdc.config import load_pipeline
from hudi_cdc.core import render
from hudi_cdc.jobs import streamer
from tests.shared import require

pytestmark = [pytest.mark.postgres, pytest.mark.spark]

TABLE = "typed"
DDL = [
    "CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy')",
    "CREATE EXTENSION IF NOT EXISTS ltree",
    """CREATE TABLE public.typed (
        id integer PRIMARY KEY, d date, ts timestamp, ts3 timestamp(3), tstz timestamptz, tm time, tmtz timetz,
        n122 numeric(12,2), nbig numeric(38,10), nfree numeric, m money, iv interval,
        tarr text[], iarr integer[], darr date[], narr numeric(10,2)[], nfarr numeric[], tsarr timestamp[],
        b bytea, j json, jb jsonb, u uuid, e mood, x xml, lt ltree, ip inet, r real, f8 double precision,
        bo boolean, c char(3))""",
]
COLUMNS = ("id, d, ts, ts3, tstz, tm, tmtz, n122, nbig, nfree, m, iv, tarr, iarr, darr, narr, nfarr, tsarr, "
           "b, j, jb, u, e, x, lt, ip, r, f8, bo, c")
SNAPSHOT = [
    "(1, '2024-01-02', '2024-01-02 03:04:05.123456', '2024-01-02 03:04:05.123', '2024-01-02 03:04:05.654321+05:30', "
    "'13:14:15.123456', '13:14:15.5+02', 12.34, 1234567890123456789012345678.0123456789, 3.14159265358979, 12.34, "
    "'1 year 2 mons 3 days 04:05:06.789', ARRAY['a', NULL, 'c'], ARRAY[1, NULL, 3], "
    "ARRAY['2024-01-01', NULL, 'infinity']::date[], ARRAY[1.5, NULL]::numeric(10,2)[], ARRAY[1.5, NULL, -2.25], "
    "ARRAY['2024-01-01 01:02:03.5', NULL]::timestamp[], '\\x00ff10', '{\"a\": 1,  \"b\":[1,2]}', "
    "'{\"b\": [1, 2.50], \"a\": \"x\"}', 'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11', 'happy', '<a>1</a>', 'top.mid', "
    "'10.0.0.1/8', 1.1, 2.2, true, 'ab')",
    "(2, 'infinity', 'infinity', 'infinity', 'infinity', '00:00:00', '00:00:00+00', -99999.99, "
    "-1234567890123456789012345678.0123456789, -12345678901234567890.123456789012345678, -1.5, '-3 days', "
    "'{}', NULL, NULL, NULL, NULL, NULL, '\\x', 'null', '[]', NULL, 'sad', NULL, NULL, NULL, 'NaN', '-Infinity', "
    "false, NULL)",
    "(3, '-infinity', '1900-01-01 00:00:00.000001', '-infinity', '-infinity', '24:00:00', NULL, NULL, NULL, "
    "0.000000000000000001, NULL, NULL, ARRAY[NULL]::text[], NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, "
    "NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL)",
]
# streamed: written in a non-UTC session (timestamptz literals without an offset are Kolkata time)
STREAMED_1 = [
    f"INSERT INTO typed ({COLUMNS}) VALUES (4, '0044-03-15 BC', '0044-03-15 12:00:00 BC', NULL, "
    "'2024-06-01 12:00:00.123456', '00:00:00.000001', NULL, 0.01, NULL, 314159.265358979323846, NULL, "
    "'P1Y2M3DT4H5M6.000007S', ARRAY[NULL, NULL]::text[], NULL, ARRAY['0001-01-01'::date, '-infinity'], NULL, NULL, "
    "ARRAY['1999-12-31 23:59:59.999999'::timestamp], NULL, NULL, '{\"n\": 1e2}', NULL, 'ok', NULL, NULL, "
    "'::1', NULL, NULL, NULL, 'xyz')",
    "UPDATE typed SET n122 = 0.01, tarr = ARRAY[NULL, 'z'], darr = ARRAY[NULL]::date[], "
    "tstz = '2024-01-01 00:00:00.000001+00', jb = '{\"k\": [true, null]}', nfree = -0.5 WHERE id = 1",
    "UPDATE typed SET d = '2000-02-29', ts = '-infinity' WHERE id = 2",
]
STREAMED_2 = [
    "UPDATE typed SET iv = '1 year 2 mons', nfarr = ARRAY[NULL, 7]::numeric[], "
    "tsarr = ARRAY[NULL, 'infinity']::timestamp[] WHERE id = 3",
    "INSERT INTO typed (id, d, n122) VALUES (5, '1582-10-04', 1.00)",
]
TYPES = ("COPY_ON_WRITE", "MERGE_ON_READ")


def _connect(db: dict):
    import psycopg

    return psycopg.connect(host=db["host"], port=db["port"], dbname=db["name"], user=db["user"],
                           password=os.environ[db["password_env"]], autocommit=True)


def _sql(db: dict, *statements, tz: str = "UTC") -> None:
    with _connect(db) as conn:
        conn.execute(f"SET TIME ZONE '{tz}'")
        for st in statements:
            conn.execute(st)


def _pipeline(base: Path, db: dict, lake: str = "lake", **extra):
    base.mkdir(parents=True, exist_ok=True)
    cfg = {**extra, "pipeline": "typed", "source": {"root": "landing", "database": {**db, "flush_size": 100}},
           "lake": {"root": lake, "hive_database": "typed"}, "spark": {"shuffle_partitions": 2},
           "tables": {TABLE: {"topic": f"{db['name']}.public.{TABLE}", "record_key": "id",
                              "table_types": list(TYPES), "compaction_delta_commits": 2}}}
    path = base / f"{lake}.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return load_pipeline(path)


def streamer_targets(p, table: str, op: str, props_dir: Path) -> list:
    """The streamer's targets of `table` (every table type of the pipeline) as the local runner gives them, its
    properties rendered into props_dir: for rounds on the shared session (streamer.run_targets)."""
    render.write_properties(p, props_dir)
    targets = []
    for tt in p.table(table).table_types:
        props = props_dir / render.props_filename(p, table, tt)
        flags = render.streamer_flags(p, render.Job(table, tt, op), f"file://{props}")
        for kv in render.LOCAL_HOODIE_CONF:
            flags += ["--hoodie-conf", kv]
        targets.append(streamer.parse_argv(flags)[0])
    return targets


def _run(spark, p, op: str, log: list[str]):
    targets = streamer_targets(p, TABLE, op, Path(p.base_dir) / f"props-{Path(p.lake.root).name}")
    return streamer.run_targets(spark, targets, log=log.append)


def _lake(p, tt):
    from hudi_cdc.lake.reader import read_arrow

    return read_arrow(p.base_path(TABLE, tt))


def _by_id(table) -> dict[int, dict]:
    """{id: {column: value}} of a lake table, dates/timestamps as hudi-rs's typed values made numbers."""
    from hudi_cdc.sources import typed_values as tv

    cols = {n: tv.lake_column(table.column(n)) for n in table.column_names if not n.startswith("_hoodie")}
    ids = cols["id"][1]
    return {i: {n: vals[k] for n, (_, vals) in cols.items()} for k, i in enumerate(ids)}


def _days(d: date) -> int:
    return (d - date(1970, 1, 1)).days


def _micros(dt: datetime) -> int:
    if dt.tzinfo is None:
        dt = dt.replace(tzinfo=timezone.utc)
    delta = dt - datetime(1970, 1, 1, tzinfo=timezone.utc)
    return (delta.days * 86_400 + delta.seconds) * 1_000_000 + delta.microseconds


@pytest.fixture(scope="module")
def scenario(tmp_path_factory, pg_database, spark):
    from hudi_cdc.capture.capture import capture_once

    base = tmp_path_factory.mktemp("types")
    db = pg_database("types_real")
    _sql(db, *DDL, *[f"INSERT INTO typed ({COLUMNS}) VALUES {row}" for row in SNAPSHOT], tz="America/New_York")
    p = _pipeline(base, db)
    log: list[str] = []
    capture_once(p, progress=log.append, timeout_seconds=300)
    # a lake bootstrapped before typed columns: the same landed files, written with the raw encodings
    legacy = _pipeline(base, db, lake="lake_legacy")
    from hudi_cdc.jobs.stream import typed

    real_apply = typed.apply
    typed.apply = lambda df, *a, **kw: df
    try:
        _run(spark, legacy, "BULK_INSERT", log)
    finally:
        typed.apply = real_apply
    _run(spark, p, "BULK_INSERT", log)
    _sql(db, *STREAMED_1, tz="Asia/Kolkata")
    capture_once(p, progress=log.append, timeout_seconds=300)
    _run(spark, p, "UPSERT", log)
    _sql(db, *STREAMED_2)
    capture_once(p, progress=log.append, timeout_seconds=300)
    _run(spark, p, "UPSERT", log)  # MoR: the second delta commit compacts inline
    legacy_log: list[str] = []
    _run(spark, legacy, "UPSERT", legacy_log)
    return {"p": p, "db": db, "legacy": legacy, "log": log, "legacy_log": legacy_log}


def test_lake_columns_are_sql_types(scenario):
    import pyarrow as pa

    for tt in TYPES:
        s = _lake(scenario["p"], tt).schema
        t = {n: s.field(n).type for n in s.names}
        assert t["d"] == pa.date32() and pa.types.is_timestamp(t["ts"]) and pa.types.is_timestamp(t["ts3"])
        assert pa.types.is_timestamp(t["tstz"]), tt
        assert t["n122"] == pa.decimal128(12, 2) and t["nbig"] == pa.decimal128(38, 10)
        assert t["nfree"] == pa.decimal128(38, 18) and t["m"] == pa.decimal128(38, 2)
        assert t["tm"] == t["iv"] == t["j"] == t["jb"] == t["u"] == t["e"] == t["x"] == t["lt"] == pa.string()
        assert t["b"] == pa.binary()
        assert t["tarr"].value_type == pa.string() and t["darr"].value_type == pa.date32()
        assert t["narr"].value_type == pa.decimal128(10, 2) and t["nfarr"].value_type == pa.decimal128(38, 18)
        assert pa.types.is_timestamp(t["tsarr"].value_type)


def test_lake_values_read_by_hudi_rs(scenario):
    """Values chosen by hand (not through verify's code) for every kind, CoW and MoR (after compaction)."""
    inf_d, ninf_d = _days(date(9999, 12, 31)), _days(date(1, 1, 1))
    inf_ts, ninf_ts = _micros(datetime(9999, 12, 31, 23, 59, 59, 999999)), _micros(datetime(1, 1, 1))
    for tt in TYPES:
        rows = _by_id(_lake(scenario["p"], tt))
        assert sorted(rows) == [1, 2, 3, 4, 5], tt
        r1, r2, r3, r4, r5 = (rows[i] for i in (1, 2, 3, 4, 5))
        assert r1["d"] == _days(date(2024, 1, 2)) and r1["ts"] == _micros(datetime(2024, 1, 2, 3, 4, 5, 123456))
        assert r1["ts3"] == _micros(datetime(2024, 1, 2, 3, 4, 5, 123000))
        assert r1["tstz"] == _micros(datetime(2024, 1, 1, 0, 0, 0, 1))
        assert r1["tm"] == "13:14:15.123456" and r1["tmtz"] == "11:14:15.5Z"
        assert r1["n122"] == Decimal("0.01") and r1["nbig"] == Decimal("1234567890123456789012345678.0123456789")
        assert r1["nfree"] == Decimal("-0.5") and r1["m"] == Decimal("12.34")
        assert r1["iv"] == "P1Y2M3DT4H5M6.789S"
        assert r1["tarr"] == [None, "z"] and r1["iarr"] == [1, None, 3] and r1["darr"] == [None]
        assert r1["narr"] == [Decimal("1.50"), None] and r1["nfarr"] == [Decimal("1.5"), None, Decimal("-2.25")]
        assert r1["tsarr"] == [_micros(datetime(2024, 1, 1, 1, 2, 3, 500000)), None]
        assert r1["b"] == b"\x00\xff\x10" and r1["j"] == '{"a": 1,  "b":[1,2]}' and r1["jb"] == '{"k": [true, null]}'
        assert (r1["u"], r1["e"], r1["x"], r1["lt"], r1["ip"]) == (
            "a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11", "happy", "<a>1</a>", "top.mid", "10.0.0.1/8")
        assert r1["bo"] is True and r1["c"] == "ab "
        # infinities by policy, negative and 38-digit numerics, an empty array, NaN/-Infinity floats
        assert (r2["d"], r2["ts"], r2["ts3"], r2["tstz"]) == (_days(date(2000, 2, 29)), ninf_ts, inf_ts, inf_ts)
        assert r2["n122"] == Decimal("-99999.99") and r2["nbig"] == Decimal("-1234567890123456789012345678.0123456789")
        assert r2["nfree"] == Decimal("-12345678901234567890.123456789012345678") and r2["m"] == Decimal("-1.50")
        assert r2["iv"] == "P0Y0M-3DT0H0M0S" and r2["tarr"] == [] and r2["b"] == b"" and r2["jb"] == "[]"
        assert r2["tm"] == "00:00:00.000000" and r2["f8"] == float("-inf") and r2["r"] != r2["r"]
        assert (r3["d"], r3["ts3"], r3["tstz"]) == (ninf_d, ninf_ts, ninf_ts)
        assert r3["ts"] == _micros(datetime(1900, 1, 1, 0, 0, 0, 1)) and r3["tm"] == "24:00:00.000000"
        assert r3["nfree"] == Decimal("0.000000000000000001") and r3["tarr"] == [None]
        assert r3["iv"] == "P1Y2M0DT0H0M0S" and r3["nfarr"] == [None, Decimal(7)] and r3["tsarr"] == [None, inf_ts]
        # streamed: BC dates exact (proleptic Gregorian), timestamptz from a Kolkata session as the UTC instant
        assert r4["d"] == -735160 and r4["darr"] == [ninf_d, ninf_d]
        assert r4["ts"] == -735160 * 86_400_000_000 + 43_200_000_000
        assert r4["tstz"] == _micros(datetime(2024, 6, 1, 6, 30, 0, 123456)) and r4["tm"] == "00:00:00.000001"
        assert r4["nfree"] == Decimal("314159.265358979323846") and r4["tarr"] == [None, None]
        assert r4["iv"] == "P1Y2M3DT4H5M6.000007S" and r4["jb"] == '{"n": 100}' and r4["ip"] == "::1"
        assert r4["tsarr"] == [_micros(datetime(1999, 12, 31, 23, 59, 59, 999999))]
        assert r5["d"] == _days(date(1582, 10, 4)) and r5["n122"] == Decimal("1.00")
        assert inf_d not in (r["d"] for r in rows.values()) or rows[1]["darr"] != [inf_d]


def test_spark_reads_the_same_typed_values(scenario, spark):
    """Spark (Hudi's datasource, snapshot query) reads what hudi-rs reads, column by column."""
    for tt in TYPES:
        want = _by_id(_lake(scenario["p"], tt))
        df = spark.read.format("hudi").load(scenario["p"].base_path(TABLE, tt))
        items = []
        for f in df.schema.fields:
            if f.name.startswith("_hoodie"):
                continue
            t = f.dataType.simpleString()
            q = f"`{f.name}`"
            e = {"date": f"unix_date({q})", "timestamp": f"unix_micros({q})",
                 "array<date>": f"transform({q}, x -> unix_date(x))",
                 "array<timestamp>": f"transform({q}, x -> unix_micros(x))"}.get(t, q)
            items.append(f"{e} AS {q}")
        got = {r["id"]: r for r in (x.asDict(recursive=True) for x in df.selectExpr(*items).collect())}
        assert sorted(got) == sorted(want)
        for i, row in want.items():
            for c, v in row.items():
                g = got[i][c]
                if isinstance(v, float) and v != v:
                    assert g != g
                else:
                    assert g == v, (tt, i, c, g, v)


def test_verify_equal_for_cow_and_mor(scenario):
    from hudi_cdc.sources.verify import verify

    for tt in TYPES:
        r = verify(scenario["p"], TABLE, tt)
        assert r.equal, r.summary()
        assert r.db_rows == r.lake_rows == 5 and len(r.columns) == 29 and not r.not_in_lake


def test_legacy_table_keeps_its_encodings_and_verify_names_them(scenario):
    """A table bootstrapped before typed columns: the next round keeps the raw encodings (one log line
    naming the columns and the way to migrate), the round succeeds; verify reports those columns."""
    import pyarrow as pa

    from hudi_cdc.sources.verify import verify

    lines = [m for m in scenario["legacy_log"] if "keep Debezium's encodings" in m]
    assert len(lines) == 2 and "re-bootstrap" in lines[0] and "d, ts, ts3, tstz, tm, nfree" in lines[0]
    for tt in TYPES:
        s = _lake(scenario["legacy"], tt).schema
        assert s.field("d").type == pa.int32() and s.field("tstz").type == pa.string()
        assert sorted(_by_id(_lake(scenario["legacy"], tt))) == [1, 2, 3, 4, 5]
        r = verify(scenario["legacy"], TABLE, tt)
        assert not r.equal and r.missing == r.extra == 0
        assert {"d", "ts", "tstz", "nfree", "tm"} <= set(r.column_differences)
        assert "n122" not in r.column_differences and "tarr" not in r.column_differences


@pytest.mark.deltastreamer
def test_real_deltastreamer_014_lands_the_same_types(scenario):
    """The real HoodieDeltaStreamer 0.14.0 (one spark-submit per job) over the same landed files: its
    transformer SQL, rendered per column from the landed schema, gives the same lake types and values.
    MoR here (the local runner's properties); CoW by the EMR-rendered properties in the next test."""
    from hudi_cdc.runners.deltastreamer import runtime, submit
    from hudi_cdc.sources.verify import verify

    require(runtime.is_ready(), "no HoodieDeltaStreamer 0.14.0 runtime: run scripts/install-deltastreamer.sh")
    p = _pipeline(Path(scenario["p"].base_dir), scenario["db"], lake="lake014", hudi={"version": "0.14.0"})
    submit.run_jobs(p, [render.Job(TABLE, "MERGE_ON_READ", "BULK_INSERT")], "bootstrap", progress=lambda m: None)
    for tt in ("MERGE_ON_READ",):
        want, got = _lake(scenario["p"], tt), _lake(p, tt)
        for name in want.schema.names:
            if not name.startswith("_hoodie"):
                assert got.schema.field(name).type == want.schema.field(name).type, (tt, name)
        mine, theirs = _by_id(want), _by_id(got)
        assert sorted(theirs) == sorted(mine)
        for k, row in mine.items():
            for c, v in row.items():
                g = theirs[k][c]
                assert g == v or (v != v and g != g), (tt, k, c, g, v)
        r = verify(p, TABLE, tt)
        assert r.equal, r.summary()


@pytest.mark.deltastreamer
def test_rendered_emr_properties_type_the_same_on_the_real_014(scenario):
    """What `hudi-cdc render` writes (and the AWS runners upload) for HoodieStreamer on EMR (hudi.version
    0.14.0, engine hoodiestreamer): its properties and schema files, run unchanged by the real
    HoodieDeltaStreamer 0.14.0 locally, give the same lake types and values as hudi-cdc's streamer."""
    from hudi_cdc.pipeline.plan import job_argvs
    from hudi_cdc.runners.deltastreamer import runtime, submit, typed_render
    from hudi_cdc.sources.verify import verify
    from hudi_cdc.spark import launch

    require(runtime.is_ready(), "no HoodieDeltaStreamer 0.14.0 runtime: run scripts/install-deltastreamer.sh")
    base = Path(scenario["p"].base_dir)
    p = _pipeline(base, scenario["db"], lake="lake014emr", hudi={"version": "0.14.0", "engine": "hoodiestreamer"})
    out = base / "emr-rendered"
    lines: list[str] = []
    rows = {r["job"]: r["argv"] for r in job_argvs(p, out, None, "emr", lines.append)}
    assert not [ln for ln in lines if not ln.startswith("wrote ")], lines
    tt = "COPY_ON_WRITE"
    job = render.Job(TABLE, tt, "BULK_INSERT")
    emr_argv = rows[job.name]
    assert emr_argv[emr_argv.index("--transformer-class") + 1] == render.TRANSFORMER_CLASS
    props = out / render.props_filename(p, TABLE, tt)
    assert f"schema.file=file://{out.resolve()}/{TABLE}_cow.target.avsc" in props.read_text()
    rt = runtime.load()
    argv = render.real_streamer_local_argv(p, job, f"file://{props.resolve()}", spark_submit=str(rt.spark_submit),
                                           jars=[str(rt.classpath_first), *(str(j) for j in rt.jars)],
                                           app_jar=str(rt.app_jar))
    log = base / "emr-rendered.log"
    res = launch.Launcher().run(argv, env=submit._environment(p, rt), cwd=base, log_path=log, timeout=600)
    assert res.ok, res.cause()
    want, got = _lake(scenario["p"], tt), _lake(p, tt)
    for name in want.schema.names:
        if not name.startswith("_hoodie"):
            assert got.schema.field(name).type == want.schema.field(name).type, name
    mine, theirs = _by_id(want), _by_id(got)
    assert sorted(theirs) == sorted(mine)
    for k, row in mine.items():
        for c, v in row.items():
            assert theirs[k][c] == v or (v != v and theirs[k][c] != theirs[k][c]), (k, c, theirs[k][c], v)
    r = verify(p, TABLE, tt)
    assert r.equal, r.summary()
    assert typed_render.applies(p, "emr-serverless")


def test_corrupted_lake_value_is_a_difference(scenario, spark):
    """A rounded decimal and a shifted timestamp written into the CoW table: verify counts the row once
    and names both columns."""
    from hudi_cdc.common import properties
    from hudi_cdc.jobs.stream.argv import Target
    from hudi_cdc.jobs.stream.round import writer_options
    from hudi_cdc.sources.verify import verify

    p = scenario["p"]
    base = p.base_path(TABLE, "COPY_ON_WRITE")
    props_file = Path(p.base_dir) / "props-lake" / render.props_filename(p, TABLE, "COPY_ON_WRITE")
    props = properties.load_properties(str(props_file))
    row = spark.read.format("hudi").load(base).where("id = 1")
    row = row.drop(*[c for c in row.columns if c.startswith("_hoodie") and c != "_hoodie_is_deleted"])
    bad = row.selectExpr(*[{"nbig": "CAST(round(nbig, 2) AS DECIMAL(38,10)) AS nbig",
                            "ts": "ts + INTERVAL 1 HOUR AS ts", "__lsn": "__lsn + 1 AS __lsn"}.get(c, f"`{c}`")
                           for c in row.columns])
    t = Target(props=str(props_file), target_base_path=base, target_table=f"typed_cow.{TABLE}",
               table_type="COPY_ON_WRITE", op="UPSERT", source_ordering_fields="__lsn")
    opts = {**writer_options(props, t), "hoodie.datasource.write.operation": "upsert",
            "hoodie.embed.timeline.server": "false"}
    bad.write.format("hudi").options(**opts).mode("append").save(base)
    r = verify(p, TABLE, "COPY_ON_WRITE")
    assert not r.equal and r.different == 1 and r.different_keys == ["1"]
    assert r.different_columns == {"1": ["ts", "nbig"]} and r.column_differences == {"ts": 1, "nbig": 1}
    assert verify(p, TABLE, "MERGE_ON_READ").equal


def test_numeric_nan_and_overflow_are_never_silent(scenario, spark):
    """NaN arrives from Debezium as NULL: capture reads it from the database and it lands as a rejected
    value; a BC date inside an array arrives as the AD date (pgjdbc): verify names it. A numeric that does
    not fit decimal(38,18) exactly (19 decimals) never fails the round (issue
    36): the row lands, its typed column is NULL, __rejects keeps the exact value, verify names it as a
    rejected value (not a difference) and the commit records the count status reads."""
    import json

    from hudi_cdc.capture.capture import capture_once
    from hudi_cdc.lake.status import table_status
    from hudi_cdc.sources.verify import verify

    p, db = scenario["p"], scenario["db"]
    _sql(db, "UPDATE typed SET nfree = 'NaN', darr = ARRAY['0044-03-15 BC'::date] WHERE id = 3")
    capture_once(p, progress=lambda m: None, timeout_seconds=300)
    _run(spark, p, "UPSERT", [])
    # (CoW: hudi-rs 0.5.0 cannot merge a MoR log's timestamp array with its compacted base file)
    r = verify(p, TABLE, "COPY_ON_WRITE")
    assert r.different == 2 and r.different_columns["3"] == ["darr"]  # and row 1, corrupted above
    # the NaN: capture read it from the database (capture/specials.py): NULL in the lake, kept in __rejects
    assert r.rejected == 1 and r.rejected_columns == {"nfree": 1}, r.summary()
    assert [(v["key"], v["value"]) for v in r.rejected_values] == [("3", "NaN")]
    _sql(db, "UPDATE typed SET nfree = 0.1234567890123456789, n122 = 2.50 WHERE id = 5")  # 19 decimals
    capture_once(p, progress=lambda m: None, timeout_seconds=300)
    log: list[str] = []
    _run(spark, p, "UPSERT", log)
    assert [m for m in log if "1 row(s) hold a value their lake type cannot hold" in m], log
    rows = _by_id(_lake(p, "COPY_ON_WRITE"))
    assert rows[5]["nfree"] is None and rows[5]["n122"] == Decimal("2.50")  # the row landed
    assert json.loads(rows[5]["__rejects"]) == {
        "nfree": {"value": "0.1234567890123456789", "reason": "does not fit decimal(38,18) exactly"}}
    assert rows[4]["__rejects"] is None and rows[4]["nfree"] == Decimal("314159.265358979323846")
    r = verify(p, TABLE, "COPY_ON_WRITE")
    assert r.rejected == 2 and r.rejected_columns == {"nfree": 2} and r.different == 2  # rows 1 and 3, as above
    assert [v for v in r.rejected_values if v["key"] == "5"] == [
        {"key": "5", "column": "nfree", "value": "0.1234567890123456789",
         "reason": "does not fit decimal(38,18) exactly", "__lsn": rows[5]["__lsn"]}]
    assert "key 5 nfree = 0.1234567890123456789" in r.summary()
    assert table_status(p, TABLE, "COPY_ON_WRITE").rejected_rows == 2


def test_first_mor_round_of_every_type_commits_from_the_driver(scenario):
    """The first streamed MoR round (every type of docs/types.md, no compaction yet) is made in the driver with no
    Spark job (jobs/stream/driver_round.py) and committed by Hudi's Java write client there
    (jobs/stream/driver_write.py), and test_lake_values_read_by_hudi_rs and test_spark_reads_the_same_typed_values
    read its values back."""
    driver = [m for m in scenario["log"] if "made in the driver" in m or "not from the driver" in m]
    assert driver and "made in the driver" in driver[0], driver
    # and its events were read, typed and located in the driver too, with no Spark job (driver_round.py)
    made = [m for m in scenario["log"] if "located in the driver" in m or "reads through Spark" in m]
    assert made and "located in the driver" in made[0], made
