"""``verify`` for PostgreSQL sources: the database side read through a server-side cursor in chunks, each
value in the typed form a lake user reads (sources/typed_values.py: the database's text read with DateStyle
ISO, IntervalStyle iso_8601, TimeZone UTC), compared with the lake by sources/verify.py; a raw history
table (sources/history.py) as a multiset of rows."""

from __future__ import annotations

from collections import Counter

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import TableStateError
from hudi_cdc.sources import history as hist
from hudi_cdc.sources import tables as src
from hudi_cdc.sources import typed_values as tv
from hudi_cdc.sources.comparison import (
    CHUNK,
    SAMPLES,
    Column,
    VerifyResult,
    _lake_table,
    _lake_values,
    _row_digest,
    compare,
    require_lake_table,
)
from hudi_cdc.sources.postgres import db
from hudi_cdc.sources.postgres.routed import routed_table
from hudi_cdc.sources.postgres.shaped import shaped_table
from hudi_cdc.sources.shape_sql import masked_value


def _db_columns(conn, t: src.SourceTable) -> tuple[list[Column], dict[str, str]]:
    """The table's columns (a domain as its base type: Debezium sends the base type's encoding) and
    the SELECT template of each (a domain's value read as its base type, psycopg knows no domain)."""
    rows = conn.execute(
        "SELECT a.attname, format_type(coalesce(nullif(ty.typbasetype, 0), a.atttypid), "
        "CASE WHEN ty.typtype = 'd' THEN ty.typtypmod ELSE a.atttypmod END), ty.typtype = 'd' FROM pg_attribute a "
        "JOIN pg_type ty ON ty.oid = a.atttypid JOIN pg_class c ON c.oid = a.attrelid "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
        (t.schema, t.table)).fetchall()
    if not rows:
        raise TableStateError(f"table {t.qualified} not found in the source database")
    cols = [Column.of(name, typ, tv.kind_of(typ)) for name, typ, _ in rows]
    templates = {c.name: tv.select_sql("({}::" + c.type + ")" if domain else "{}", c.type)
                 for c, (_, _, domain) in zip(cols, rows, strict=True)}
    return cols, templates


def verify(pipeline: Pipeline, table: str, table_type: str, samples: int = SAMPLES, history: bool = False
           ) -> VerifyResult:

    t = pipeline.table(table)
    # a routed table: the UNION ALL of its shards with the source column (routed.py), made below
    st = src.source_table(pipeline, table) if t.route is None else src.SourceTable(table, t.topic, "", "")
    keys = t.record_keys
    require_lake_table(pipeline, table, table_type, history)
    lake = _lake_table(pipeline, table, table_type, history)
    if hist.is_history(keys):  # an append-only raw history: compared as a multiset of rows
        return _verify_history(pipeline, table, table_type, st, lake, samples)
    lake_cols = set(lake.column_names) if lake is not None else set()
    shape, salt = pipeline.shape(table), pipeline.mask_salt(table)
    with db.connect(pipeline, autocommit=False) as conn:
        if t.route is not None:
            st = routed_table(conn, pipeline, table)
        db_cols, templates = _db_columns(conn, st)
        # the table's shaping (columns, types, derived columns, filter) as a view (shaped.py)
        st = shaped_table(conn, shape, st, keys, [c.db_name for c in db_cols], f"tables.{table}")
        if not shape.empty:
            db_cols, templates = _db_columns(conn, st)
        missing_keys = [k for k in keys if k not in {c.name for c in db_cols}]
        if missing_keys:
            raise TableStateError(f"record key {', '.join(missing_keys)} is not a column of {st.qualified}")
        cols = [c for c in db_cols if (c.name in lake_cols or lake is None) and c.name not in keys]
        not_in_lake = [c.name for c in db_cols if lake is not None and c.name not in lake_cols]
        kinds = {c.name: c.kind for c in db_cols}
        db_names = {c.name: c.db_name for c in db_cols}
        db_lsn = db.current_lsn(conn)
        db_digests: dict[tuple, bytes] = {}
        from psycopg import sql

        for statement in tv.SESSION_SQL:  # the text forms typed_values parses (this transaction only)
            conn.execute(statement.replace("SET ", "SET LOCAL ", 1))
        query = sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join(sql.SQL(templates[n]).format(sql.Identifier(db_names[n]))
                               for n in keys + [c.name for c in cols]),
            sql.Identifier(st.schema, st.table))
        with conn.cursor(name="hudi_cdc_verify") as cur:
            cur.itersize = CHUNK
            cur.execute(query)
            for row in cur:
                row = [masked_value(shape, n, v, salt) for n, v in zip(keys + [c.name for c in cols], row,
                                                                        strict=True)] if shape.mask else row
                key = tuple(tv.db_value(kinds[k], v) for k, v in zip(keys, row[:len(keys)], strict=True))
                db_digests[key] = _row_digest([tv.db_value(c.kind, v)
                                               for c, v in zip(cols, row[len(keys):], strict=True)])
        conn.rollback()

    result = VerifyResult(table, table_type, equal=False, db_rows=len(db_digests), lake_rows=0,
                          columns=[c.name for c in cols], not_in_lake=not_in_lake, db_lsn=db_lsn)
    return compare(lake, t, cols, kinds, db_digests, result, samples)


def _verify_history(pipeline: Pipeline, table: str, table_type: str, st, lake, samples: int) -> VerifyResult:
    """A raw history table (sources/history.py) against the database: the database's rows as a
    multiset against the landed inserts minus the deleted rows, over the columns both have."""
    lake_cols = set(lake.column_names) if lake is not None else set()
    with db.connect(pipeline, autocommit=False) as conn:
        db_cols, templates = _db_columns(conn, st)
        cols = [c for c in db_cols if c.name in lake_cols or lake is None]
        kinds = {c.name: c.kind for c in db_cols}
        db_lsn = db.current_lsn(conn)
        from psycopg import sql

        for statement in tv.SESSION_SQL:
            conn.execute(statement.replace("SET ", "SET LOCAL ", 1))
        query = sql.SQL("SELECT {} FROM {}").format(
            sql.SQL(", ").join(sql.SQL(templates[c.name]).format(sql.Identifier(c.db_name)) for c in cols),
            sql.Identifier(st.schema, st.table))
        db_rows: Counter = Counter()
        with conn.cursor(name="hudi_cdc_verify") as cur:
            cur.itersize = CHUNK
            cur.execute(query)
            for row in cur:
                db_rows[_row_digest([tv.db_value(c.kind, v) for c, v in zip(cols, row, strict=True)])] += 1
        conn.rollback()
    n = lake.num_rows if lake is not None else 0
    values = _lake_values(lake, [c.name for c in cols], kinds) if n else [[] for _ in cols]
    ops = lake.column(hist.OP).to_pylist() if n and hist.OP in lake_cols else [None] * n
    lake_rows, _updates = hist.replay(ops, [_row_digest([v[i] for v in values]) for i in range(n)])
    missing, extra = hist.differences(db_rows, lake_rows)
    result = VerifyResult(table, table_type, equal=not (missing or extra), db_rows=sum(db_rows.values()),
                          lake_rows=sum(c for c in lake_rows.values() if c > 0), missing=len(missing), extra=len(extra),
                          missing_keys=[d.hex()[:16] for d in missing[:samples]],
                          extra_keys=[d.hex()[:16] for d in extra[:samples]], columns=[c.name for c in cols],
                          not_in_lake=[c.name for c in db_cols if lake is not None and c.name not in lake_cols],
                          db_lsn=db_lsn)
    return result
