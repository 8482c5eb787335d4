"""The Redshift staged merge and the Athena latest-state view, run for real on PostgreSQL 15.

Redshift and Athena cannot run here, so the very statements `hudi-cdc render-sql --engine redshift`
(and `--engine athena`) prints are transpiled by sqlglot to PostgreSQL and run on a real server
(Debian's postgresql-15, tests/plugins/postgres.py) against the one landed stream of
tests/sinks/sink_stream.py, which the Iceberg test runs too (same-millisecond updates, key-only deletes, a
partition move, stale updates and a stale delete, a redelivered file, a delete and a re-insert, a key
back after its delete). After every round the target table (and the view) must equal the state
replayed from the events (sample.replay), by key and every column.

What is not Redshift's own and is stood in for, each named here: the MSK topic (`CREATE EXTERNAL
SCHEMA ... FROM MSK`) is a table of Kafka records with JSON values, one per event, offsets counting
up; Redshift's `CAN_JSON_PARSE` is a small SQL function; `AUTO REFRESH YES` becomes a `REFRESH
MATERIALIZED VIEW` before each call; SUPER navigation (`m.payload."col"`) becomes `->>` on json; the
`SORTKEY` clause is dropped. Athena's Hive external table over the Avro files is a table with the
pseudo-column `"$path"` (the landed file's name). Everything else (the procedure body statement by
statement, the procedure itself, its CALL, the view) is sqlglot's transpilation of what we render.
"""

from __future__ import annotations

import json

import pytest
import sqlglot
from sqlglot import exp

from hudi_cdc import sample
from hudi_cdc.config import parse_pipeline
from hudi_cdc.sinks import Statement, render_sql
from hudi_cdc.sinks.columns import columns_of
from tests.sinks.sink_stream import (
    ALL_COLS,
    ROUNDS,
    SHAPED_COLS,
    SHAPED_ROUNDS,
    check_round,
    check_shaped_round,
    shaped_expected,
)
from tests.sinks.test_sinks_sql import procedure_body, shaped_pipeline

pytestmark = pytest.mark.postgres

TOPIC = "moma.public.artists"
SCHEMA = "moma"
CAN_JSON_PARSE = ("CREATE OR REPLACE FUNCTION can_json_parse(v text) RETURNS boolean LANGUAGE plpgsql IMMUTABLE AS "
                  "$$ BEGIN PERFORM v::json; RETURN true; EXCEPTION WHEN others THEN RETURN false; END $$")


def _pipeline(tmp_path):
    return parse_pipeline({"pipeline": "t", "source": {"root": str(tmp_path / "landing")},
                           "lake": {"root": str(tmp_path / "lake"), "hive_database": SCHEMA},
                           "tables": {"artists": {"topic": TOPIC, "record_key": "artist_id", "ordering_field": "__lsn",
                                                  "partition_field": "nationality"}}}, "t.yaml", str(tmp_path))


def _fix(node: exp.Expression) -> exp.Expression | None:
    if isinstance(node, (exp.SortKeyProperty, exp.AutoRefreshProperty)):
        return None  # physical layout / Redshift's own refresh: no PostgreSQL meaning
    if isinstance(node, exp.DataType) and any(e.name.upper() == "MAX" for e in node.expressions):
        return exp.DataType.build("text")  # Redshift's VARCHAR(MAX) (a shaped table's string casts)
    if isinstance(node, exp.Column) and node.table == "payload" and node.args.get("db") is not None:
        # SUPER navigation m.payload."col" -> m.payload ->> 'col' (json, as JSON_PARSE made it)
        return exp.JSONExtractScalar(this=exp.column("payload", node.args["db"].name),
                                     expression=exp.Literal.string(node.name))
    return node


def to_postgres(sql: str, dialect: str) -> str:
    tree = sqlglot.parse_one(sql, read=dialect, error_level=sqlglot.ErrorLevel.RAISE)
    return tree.transform(_fix).sql(dialect="postgres")


def postgres_statements(st: Statement, schema: str = SCHEMA) -> list[str]:
    """One rendered Redshift/Athena statement as the PostgreSQL statements that run it."""
    if st.name == "create_external_schema":  # the MSK topic's stand-in
        return [f'CREATE SCHEMA IF NOT EXISTS "{schema}_kafka"',
                f'CREATE TABLE "{schema}_kafka"."{TOPIC}" (kafka_partition INTEGER, kafka_offset BIGINT, '
                'refresh_time TIMESTAMP, kafka_value TEXT)']
    if st.name == "create_changes":  # Athena's Hive table over the landed Avro files
        cols = ", ".join(f'"{c.name}" {c.sql_type("postgres")}' for c in columns_of(sample.schema("artists")))
        return [f'CREATE SCHEMA IF NOT EXISTS "{schema}"',
                f'CREATE TABLE "{schema}"."artists_changes" ({cols}, "$path" TEXT)']
    if st.name == "create_procedure":
        body = procedure_body(st.sql)
        pg = [to_postgres(s, "redshift") for s in body]
        assert len(pg) == len(body) == 7
        return [st.sql[:st.sql.index("$$")] + "$$\nBEGIN\n" + ";\n".join(pg) + ";\nEND;\n$$"]
    if st.name == "call_procedure":
        return [st.sql]  # CALL schema.proc() is PostgreSQL as it stands (sqlglot keeps it as a Command)
    return [to_postgres(st.sql, st.dialect)]


@pytest.fixture(scope="module")
def conn(postgres):
    import psycopg

    with psycopg.connect(postgres.dsn(), autocommit=True) as admin:
        admin.execute("DROP DATABASE IF EXISTS other_sinks")
        admin.execute("CREATE DATABASE other_sinks")
    with psycopg.connect(postgres.dsn("other_sinks"), autocommit=True) as c:
        yield c


def _rows(conn, relation: str, cols: list[str] = ALL_COLS) -> dict:
    cur = conn.execute(f"SELECT {', '.join(f'{chr(34)}{c}{chr(34)}' for c in cols)} FROM {relation}")
    rows = [dict(zip(cols, r, strict=True)) for r in cur.fetchall()]
    out = {r["artist_id"]: r for r in rows}
    assert len(out) == len(rows), f"a key is in {relation} twice"
    return out


def _expected(events: list[dict]) -> dict:
    return {k: {c: v[c] for c in ALL_COLS} for k, v in sample.replay(events, "artist_id").items()}


def test_redshift_staged_merge_runs_on_postgres(tmp_path, conn):
    sts = render_sql(_pipeline(tmp_path), "redshift", "artists", schema=sample.schema("artists"))
    names = [s.name for s in sts]
    assert names == ["create_schema", "create_external_schema", "create_streaming_view", "create_stage",
                     "create_target", "create_tombstones", "create_applied_offsets", "create_procedure",
                     "call_procedure"]
    conn.execute(CAN_JSON_PARSE)
    call = next(s for s in sts if s.name == "call_procedure")
    for st in sts:
        if st.kind == "ddl":
            for sql in postgres_statements(st):
                conn.execute(sql)
    topic, mv, target = f'"{SCHEMA}_kafka"."{TOPIC}"', f'"{SCHEMA}"."artists_debezium"', f'"{SCHEMA}"."artists_target"'
    events: list[dict] = []
    offset = 0
    rows: dict = {}
    for i, rnd in enumerate(ROUNDS):
        with conn.cursor() as cur:  # the topic: one record per event, offsets counting up, JSON values
            cur.executemany(f"INSERT INTO {topic} VALUES (0, %s, now(), %s)",
                            [(offset + n, json.dumps(e)) for n, e in enumerate(rnd)])
            cur.execute(f"INSERT INTO {topic} VALUES (0, %s, now(), 'not json')", (offset + len(rnd),))
        offset += len(rnd) + 1
        events += rnd
        conn.execute(f"REFRESH MATERIALIZED VIEW {mv}")  # AUTO REFRESH YES
        for sql in postgres_statements(call):
            conn.execute(sql)
        previous, rows = rows, _rows(conn, target)
        assert rows == _expected(events), f"round {i}: the Redshift target differs from the replay"
        check_round(i, rows, previous)
        # the high-water mark is the offsets staged: a second call stages nothing and changes nothing
        staged = conn.execute(f'SELECT count(*) FROM "{SCHEMA}"."artists_stg"').fetchone()[0]
        assert staged == len(rnd)
        for sql in postgres_statements(call):
            conn.execute(sql)
        assert conn.execute(f'SELECT count(*) FROM "{SCHEMA}"."artists_stg"').fetchone()[0] == 0
        assert _rows(conn, target) == rows
    last = conn.execute(f'SELECT max(last_offset) FROM "{SCHEMA}"."artists_applied_offsets"').fetchone()[0]
    assert last == offset - 2  # the last JSON record (the 'not json' records are never staged)


def test_athena_latest_view_runs_on_postgres(tmp_path, conn):
    sts = render_sql(_pipeline(tmp_path), "athena", "artists", schema=sample.schema("artists"))
    assert [s.name for s in sts] == ["create_changes", "create_latest_view"]
    for st in sts:
        for sql in postgres_statements(st):
            conn.execute(sql)
    events: list[dict] = []
    rows: dict = {}
    for i, rnd in enumerate(ROUNDS):
        _land_athena(conn, SCHEMA, len(events), rnd)
        events += rnd
        previous, rows = rows, _rows(conn, f'"{SCHEMA}"."artists_latest"')
        assert rows == _expected(events), f"round {i}: the Athena view differs from the replay"
        check_round(i, rows, previous)


def _land_athena(conn, schema: str, events_before: int, rnd: list[dict]) -> None:
    """One landed file's events into the stand-in of Athena's changes table, with the file as "$path"."""
    columns = [c.name for c in columns_of(sample.schema("artists"))]
    path = f"s3://landing/topics/{TOPIC}/partition=0/{sample.file_name(TOPIC, events_before)}"
    names = ", ".join(f'"{c}"' for c in [*columns, "$path"])
    with conn.cursor() as cur:
        cur.executemany(f'INSERT INTO "{schema}"."artists_changes" ({names}) VALUES '
                        f'({", ".join(["%s"] * (len(columns) + 1))})', [[e[c] for c in columns] + [path] for e in rnd])


def test_shaped_table_on_postgres(tmp_path, conn):
    """A shaped table (docs/shaping.md; tests/sinks/sink_stream.py's SHAPE: an excluded and a redacted
    column, a filter rows move in and out of, a derived column, a decimal cast): the Redshift target and
    the Athena view after every round equal the shaped replayed state, value by value."""
    db = "shaped"
    sts = {e: render_sql(shaped_pipeline(tmp_path, "redact", db=db), e, "artists", schema=sample.schema("artists"))
           for e in ("redshift", "athena")}
    conn.execute(CAN_JSON_PARSE)
    for st in sts["redshift"] + sts["athena"]:
        if st.kind == "ddl":
            for sql in postgres_statements(st, db):
                conn.execute(sql)
    target = conn.execute(f"SELECT column_name FROM information_schema.columns WHERE table_schema = '{db}' "
                          "AND table_name = 'artists_target'").fetchall()
    assert {r[0] for r in target} == set(SHAPED_COLS)
    call = next(s for s in sts["redshift"] if s.name == "call_procedure")
    events: list[dict] = []
    for i, rnd in enumerate(SHAPED_ROUNDS):
        with conn.cursor() as cur:
            cur.executemany(f'INSERT INTO "{db}_kafka"."{TOPIC}" VALUES (0, %s, now(), %s)',
                            [(len(events) + n, json.dumps(e)) for n, e in enumerate(rnd)])
        _land_athena(conn, db, len(events), rnd)
        events += rnd
        conn.execute(f'REFRESH MATERIALIZED VIEW "{db}"."artists_debezium"')
        for sql in postgres_statements(call, db):
            conn.execute(sql)
        want = shaped_expected(events, lambda v: "****")
        for relation in (f'"{db}"."artists_target"', f'"{db}"."artists_latest"'):
            rows = _rows(conn, relation, SHAPED_COLS)
            assert rows == want, f"round {i}: {relation} differs from the shaped replay"
            check_shaped_round(i, rows)
