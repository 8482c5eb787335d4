"""``verify`` for MySQL-family sources: the database side read with pymysql (one streaming SELECT, the session
in UTC), each value in the typed form a lake user reads (sources/typed_values.py, the same canonical forms as
PostgreSQL's verify; each column's kind from information_schema: catalog.py), the lake read with hudi-rs
(arrow) and compared column by column. A routed table reads the UNION ALL of its shards (routed.py), a
shaped one its kept, cast, masked and derived columns and the filter's rows (shaped.py, docs/shaping.md).
"""

from __future__ import annotations

import struct
from datetime import date, datetime, timedelta
from decimal import Decimal

from hudi_cdc.common.shaping import Shape
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import TableStateError
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
from hudi_cdc.sources.mysql import routed
from hudi_cdc.sources.mysql.catalog import columns, kind_of  # noqa: F401  (verify.kind_of, verify.columns)
from hudi_cdc.sources.mysql.shaped import shaped_select
from hudi_cdc.sources.shape_sql import masked_value

_EPOCH_DAY = date(1970, 1, 1)
_EPOCH = datetime(1970, 1, 1)


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
    if kind in ("float4", "float6", "json", "bytes"):
        return tv.db_value(kind, v)
    if kind == "bit1" and isinstance(v, int):  # a lake type boolean: shaped.py's (x <> 0)
        return v != 0
    if isinstance(v, bytes) and (kind == "bit1" or kind.startswith("bits:")):
        return tv.db_value(kind, format(int.from_bytes(v, "big"), "b"))
    if kind == "point" and isinstance(v, bytes) and len(v) >= 25:  # MySQL's SRID (4 bytes) + WKB
        x, y = struct.unpack("<dd" if v[4] == 1 else ">dd", v[9:25])
        return ("point", x, y)
    if kind == "geometry" and isinstance(v, bytes) and len(v) >= 4:  # MySQL's SRID (4 bytes, little-endian) + WKB
        return tv.geometry_value(v[4:], struct.unpack("<I", v[:4])[0])
    if kind in ("date", "timestamp", "timestamptz") and isinstance(v, str) and tv.ZERO_DATE.match(v):
        return tv.zero_date(v)  # pymysql gives a zero date as its text: equal to the one kept in __rejects
    if kind in ("date", "timestamp", "timestamptz", "time"):
        return f"{tv.UNTYPED}{v!r}"
    return v


def verify(pipeline: Pipeline, table: str, table_type: str, samples: int = SAMPLES, history: bool = False
           ) -> VerifyResult:
    import pymysql

    t = pipeline.table(table)
    keys = t.record_keys
    require_lake_table(pipeline, table, table_type, history)
    lake = _lake_table(pipeline, table, table_type, history)
    lake_cols = set(lake.column_names) if lake is not None else set()
    shape, salt = pipeline.shape(table), pipeline.mask_salt(table)
    conn = mysql.connect(pipeline)
    try:
        with conn.cursor() as cur:
            cur.execute("SET time_zone = '+00:00'")  # TIMESTAMP values in UTC, as Debezium's ZonedTimestamp
        # the table, or a routed table's shards (routed.py), with the table's shaping (shaped.py)
        source, base_cols = routed.source_from(conn, pipeline, table)
        select = shaped_select(shape, base_cols, keys, f"tables.{table}")
        names = {c.name for c in select.columns}
        absent = [k for k in keys if k not in names]
        if absent:
            raise TableStateError(f"record key {', '.join(absent)} is not a column of {table}'s source table")
        cols = [c for c in select.columns if (c.name in lake_cols or lake is None) and c.name not in keys]
        not_in_lake = [c.name for c in select.columns if lake is not None and c.name not in lake_cols]
        target = mysql.binlog_status(conn)
        db_lsn = mysql.lsn(target.file, target.pos, 0)
        order = keys + [c.name for c in cols]
        with conn.cursor(pymysql.cursors.SSCursor) as cur:
            cur.execute(select.sql(order, source))
            # a derived column without a lake type: the kind of the type the server gives its result
            resolved = {c.name: c for c in select.resolve(select.columns, order, cur.description)}
            cols = [resolved[c.name] for c in cols]
            kinds = {n: c.kind for n, c in resolved.items()}
            db_digests = _digests(cur, keys, cols, kinds, shape, salt)
    finally:
        conn.close()

    result = VerifyResult(table, table_type, equal=False, db_rows=len(db_digests), lake_rows=0,
                          columns=[c.name for c in cols], not_in_lake=not_in_lake, db_lsn=db_lsn)
    return compare(lake, t, cols, kinds, db_digests, result, samples)


def _digests(cur, keys: list[str], cols: list[Column], kinds: dict[str, str], shape: Shape, salt: str | None
             ) -> dict[tuple, bytes]:
    """{typed key: row digest} of the executed query's rows (masked columns hashed or redacted here)."""
    names = keys + [c.name for c in cols]
    out: dict[tuple, bytes] = {}
    while True:
        chunk = cur.fetchmany(CHUNK)
        if not chunk:
            return out
        for row in chunk:
            if shape.mask:
                row = [masked_value(shape, n, v, salt) for n, v in zip(names, row, strict=True)]
            key = tuple(value(kinds[k], v) for k, v in zip(keys, row[:len(keys)], strict=True))
            out[key] = _row_digest([value(c.kind, v) for c, v in zip(cols, row[len(keys):], strict=True)])
