"""``verify`` for MySQL-family sources: the database side read with pymysql, typed as Debezium's binlog
connectors encode each column (capture/verify.py holds the comparison's value forms and PostgreSQL's side).

Column kinds from information_schema.COLUMNS: DATE as days; DATETIME(0-3) as epoch milliseconds and
DATETIME(4-6) as microseconds (io.debezium.time.Timestamp / MicroTimestamp); TIMESTAMP as UTC
microseconds (ZonedTimestamp: the session is read in UTC); TIME as microseconds (MicroTime); DECIMAL and
BIGINT UNSIGNED (bigint.unsigned.handling.mode=precise) as exact decimals; FLOAT as a 32-bit float;
BLOB/BINARY as bytes; TINYINT(1), ENUM, SET, JSON and text as they are.
"""

from __future__ import annotations

from datetime import timedelta

from ..config import Pipeline
from ..errors import TableStateError
from . import mysql
from . import source as src
from .verify import CHUNK, SAMPLES, Column, VerifyResult, _canon, _key_text, _row_hash, db_value, lake_value


def kind_of(data_type: str, column_type: str, precision: int | None) -> str:
    t, full = data_type.lower(), column_type.lower()
    if t == "date":
        return "date"
    if t == "datetime":
        return "ts_millis" if (precision or 0) <= 3 else "ts_micros"
    if t == "timestamp":
        return "tstz"
    if t == "time":
        return "mysql_time"
    if t == "decimal" or (t == "bigint" and "unsigned" in full):
        return "decimal"
    if t == "float":
        return "float4"
    if t == "double":
        return "float8"
    if t in ("blob", "tinyblob", "mediumblob", "longblob", "binary", "varbinary"):
        return "bytes"
    return "plain"


def columns(conn, t: src.SourceTable) -> list[Column]:
    with conn.cursor() as cur:
        cur.execute("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, DATETIME_PRECISION FROM information_schema.COLUMNS "
                    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (t.schema, t.table))
        rows = cur.fetchall()
    if not rows:
        raise TableStateError(f"table {t.qualified} not found in the source database")
    return [Column(str(name), str(ctype), kind_of(str(dtype), str(ctype), prec)) for name, dtype, ctype, prec in rows]


def value(kind: str, v):
    if kind == "mysql_time" and isinstance(v, timedelta):
        return (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds
    return db_value(kind, v)


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def verify(pipeline: Pipeline, table: str, table_type: str, samples: int = SAMPLES) -> VerifyResult:
    import pymysql

    from ..pipeline import table_exists
    from ..reader import read_table

    t = pipeline.table(table)
    st = src.source_table(pipeline, table)
    keys = t.record_keys
    base = pipeline.base_path(table, table_type)
    if base.startswith("file://") and not table_exists(pipeline, table, table_type):
        raise TableStateError(f"table {table} ({table_type}) does not exist at {base}; run `hudi-cdc bootstrap` first")
    lake = read_table(base)
    lake_cols = set(lake[0]) if lake else set()
    conn = mysql.connect(pipeline)
    try:
        with conn.cursor() as cur:
            cur.execute("SET time_zone = '+00:00'")  # TIMESTAMP values in UTC, as Debezium's ZonedTimestamp
        db_cols = columns(conn, st)
        names = {c.name for c in db_cols}
        absent = [k for k in keys if k not in names]
        if absent:
            raise TableStateError(f"record key {', '.join(absent)} is not a column of {st.qualified}")
        cols = [c for c in db_cols if (c.name in lake_cols or not lake) and c.name not in keys]
        not_in_lake = [c.name for c in db_cols if lake and c.name not in lake_cols]
        kinds = {c.name: c.kind for c in db_cols}
        target = mysql.binlog_status(conn)
        db_lsn = mysql.lsn(target.file, target.pos, 0)
        db_hashes: dict[tuple, str] = {}
        db_values: dict[tuple, list] = {}
        query = (f"SELECT {', '.join(_quote(n) for n in keys + [c.name for c in cols])} "
                 f"FROM {_quote(st.schema)}.{_quote(st.table)}")
        with conn.cursor(pymysql.cursors.SSCursor) as cur:
            cur.execute(query)
            while True:
                chunk = cur.fetchmany(CHUNK)
                if not chunk:
                    break
                for row in chunk:
                    key = tuple(value(kinds[k], v) for k, v in zip(keys, row[:len(keys)], strict=True))
                    vals = [value(c.kind, v) for c, v in zip(cols, row[len(keys):], strict=True)]
                    db_hashes[key] = _row_hash(vals)
                    if len(db_values) < 10_000:
                        db_values[key] = vals
    finally:
        conn.close()

    soft = t.deletes == "soft"
    result = VerifyResult(table, table_type, equal=False, db_rows=len(db_hashes), lake_rows=0,
                          columns=[c.name for c in cols], not_in_lake=not_in_lake, db_lsn=db_lsn)
    seen = set()
    for r in lake:
        if soft and str(r.get(t.delete_field)) == "true":
            continue
        result.lake_rows += 1
        lsn = r.get("__lsn")
        if isinstance(lsn, int):
            result.lake_max_lsn = max(result.lake_max_lsn or 0, lsn)
        key = tuple(lake_value(kinds[k], r.get(k)) for k in keys)
        want = db_hashes.get(key)
        if want is None or key in seen:
            result.extra += 1
            if len(result.extra_keys) < samples:
                result.extra_keys.append(_key_text(key))
            seen.add(key)
            continue
        seen.add(key)
        vals = [lake_value(c.kind, r.get(c.name)) for c in cols]
        if _row_hash(vals) != want:
            result.different += 1
            if len(result.different_keys) < samples:
                kt = _key_text(key)
                result.different_keys.append(kt)
                dbv = db_values.get(key)
                if dbv is not None:
                    result.different_columns[kt] = [c.name for c, a, b in zip(cols, vals, dbv, strict=True)
                                                    if _canon(a) != _canon(b)]
    for key in db_hashes:
        if key not in seen:
            result.missing += 1
            if len(result.missing_keys) < samples:
                result.missing_keys.append(_key_text(key))
    result.equal = not (result.missing or result.extra or result.different)
    return result
