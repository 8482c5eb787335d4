"""``verify`` for MySQL-family sources: the database side read with pymysql, each value in the typed form a
lake user reads (sources/typed_values.py, the same canonical forms as PostgreSQL's verify), the lake read with
hudi-rs (arrow) and compared column by column.

Column kinds from information_schema.COLUMNS: DATE as a date; DATETIME as a timestamp (the wall clock at
UTC, as the lake stores it) and TIMESTAMP as the UTC instant (the session is read in UTC); TIME as the text
'HH:MM:SS.ffffff'; DECIMAL and BIGINT UNSIGNED (bigint.unsigned.handling.mode=precise) as exact decimals;
FLOAT as a 32-bit float; BLOB/BINARY as bytes; JSON parsed; TINYINT(1), ENUM, SET, YEAR and text as they are.
"""

from __future__ import annotations

import struct
from datetime import date, datetime, timedelta
from decimal import Decimal

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import ConfigError, TableStateError
from hudi_cdc.sources import tables as src
from hudi_cdc.sources import typed_values as tv
from hudi_cdc.sources.comparison import (
    CHUNK,
    SAMPLES,
    Column,
    VerifyResult,
    _lake_table,
    _row_digest,
    compare,
    require_lake_table,
)
from hudi_cdc.sources.mysql import binlog as mysql

_EPOCH_DAY = date(1970, 1, 1)
_EPOCH = datetime(1970, 1, 1)


def kind_of(data_type: str, column_type: str, precision: int | None) -> str:
    t, full = data_type.lower(), column_type.lower()
    if t == "date":
        return "date"
    if t == "datetime":
        return "timestamp"
    if t == "timestamp":
        return "timestamptz"
    if t == "time":
        return "time"
    if t == "json":
        return "json"
    if t == "decimal" or (t == "bigint" and "unsigned" in full):
        return "decimal"
    if t == "float":
        return "float4"
    if t == "double":
        return "float8"
    if t in ("blob", "tinyblob", "mediumblob", "longblob", "binary", "varbinary"):
        return "bytes"
    if t == "bit":  # BIT(1) lands as a boolean, BIT(n) as its text '10110' (lake_types.bits_expr)
        n = full[len("bit("):-1] if full.startswith("bit(") else "1"
        return "bit1" if n == "1" else f"bits:{n}"
    if t == "point":
        return "point"
    return "plain"


def columns(conn, t: src.SourceTable) -> list[Column]:
    with conn.cursor() as cur:
        cur.execute("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, DATETIME_PRECISION FROM information_schema.COLUMNS "
                    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (t.schema, t.table))
        rows = cur.fetchall()
    if not rows:
        raise TableStateError(f"table {t.qualified} not found in the source database")
    # each column by its lake name ("Order Date" lands as Order_Date), with its own
    return [Column.of(str(name), str(ctype), kind_of(str(dtype), str(ctype), prec))
            for name, dtype, ctype, prec in rows]


def value(kind: str, v):
    """A pymysql value in the canonical typed form of typed_values.db_value."""
    if v is None:
        return None
    if kind == "date" and isinstance(v, date) and not isinstance(v, datetime):
        return ("date", (v - _EPOCH_DAY).days)
    if kind in ("timestamp", "timestamptz") and isinstance(v, datetime):
        return ("ts", (v.replace(tzinfo=None) - _EPOCH) // timedelta(microseconds=1))
    if kind == "time" and isinstance(v, timedelta):
        micros = (v.days * 86_400 + v.seconds) * 1_000_000 + v.microseconds
        secs, us = divmod(abs(micros), 1_000_000)
        sign = "-" if micros < 0 else ""
        return f"{sign}{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}.{us:06d}"
    if kind == "decimal":  # DECIMAL comes as Decimal, BIGINT UNSIGNED as int
        return ("dec", tv.decimal_text(Decimal(v) if isinstance(v, int) else v))
    if kind in ("float4", "json", "bytes"):
        return tv.db_value(kind, v)
    if isinstance(v, bytes) and (kind == "bit1" or kind.startswith("bits:")):
        return tv.db_value(kind, format(int.from_bytes(v, "big"), "b"))
    if kind == "point" and isinstance(v, bytes) and len(v) >= 25:  # MySQL's SRID (4 bytes) + WKB
        x, y = struct.unpack("<dd" if v[4] == 1 else ">dd", v[9:25])
        return ("point", x, y)
    if kind in ("date", "timestamp", "timestamptz") and isinstance(v, str) and tv.ZERO_DATE.match(v):
        return tv.zero_date(v)  # pymysql gives a zero date as its text: equal to the one kept in __rejects
    if kind in ("date", "timestamp", "timestamptz", "time"):
        return f"{tv.UNTYPED}{v!r}"
    return v


def _quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


def verify(pipeline: Pipeline, table: str, table_type: str, samples: int = SAMPLES, history: bool = False
           ) -> VerifyResult:
    if not pipeline.shape(table).empty or pipeline.table(table).route is not None:
        raise ConfigError(f"tables.{table}: verify applies columns/mask/filter/derive/types and routing to "
                          f"PostgreSQL sources only so far, not MySQL/MariaDB ({pipeline.source_file})")
    import pymysql

    t = pipeline.table(table)
    st = src.source_table(pipeline, table)
    keys = t.record_keys
    require_lake_table(pipeline, table, table_type, history)
    lake = _lake_table(pipeline, table, table_type, history)
    lake_cols = set(lake.column_names) if lake is not None else set()
    conn = mysql.connect(pipeline)
    try:
        with conn.cursor() as cur:
            cur.execute("SET time_zone = '+00:00'")  # TIMESTAMP values in UTC, as Debezium's ZonedTimestamp
        db_cols = columns(conn, st)
        names = {c.name for c in db_cols}
        absent = [k for k in keys if k not in names]
        if absent:
            raise TableStateError(f"record key {', '.join(absent)} is not a column of {st.qualified}")
        cols = [c for c in db_cols if (c.name in lake_cols or lake is None) and c.name not in keys]
        not_in_lake = [c.name for c in db_cols if lake is not None and c.name not in lake_cols]
        kinds = {c.name: c.kind for c in db_cols}
        target = mysql.binlog_status(conn)
        db_lsn = mysql.lsn(target.file, target.pos, 0)
        db_digests: dict[tuple, bytes] = {}
        db_names = {c.name: c.db_name for c in db_cols}
        query = (f"SELECT {', '.join(_quote(db_names[n]) for n in keys + [c.name for c in cols])} "
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
                    db_digests[key] = _row_digest(vals)
    finally:
        conn.close()

    result = VerifyResult(table, table_type, equal=False, db_rows=len(db_digests), lake_rows=0,
                          columns=[c.name for c in cols], not_in_lake=not_in_lake, db_lsn=db_lsn)
    return compare(lake, t, cols, kinds, db_digests, result, samples)
