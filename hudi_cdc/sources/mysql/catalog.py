"""What verify and a route's pattern read from a MySQL-family server's information_schema: a table's columns
with the kind each is compared as (sources/typed_values.py's canonical forms), and every user table's
``<database>.<table>`` name (sources/routes.py resolves a route's pattern against them).

Column kinds: DATE as a date; DATETIME as a timestamp (the wall clock at UTC, as the lake stores it) and
TIMESTAMP as the UTC instant (verify's session is in UTC); TIME as the text 'HH:MM:SS.ffffff'; DECIMAL and
BIGINT UNSIGNED (bigint.unsigned.handling.mode=precise) as exact decimals; FLOAT as a 32-bit float;
BLOB/BINARY as bytes; JSON parsed; TINYINT(1), ENUM, SET, YEAR and text as they are."""

from __future__ import annotations

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import TableStateError
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.comparison import Column

SYSTEM_SCHEMAS = ("mysql", "information_schema", "performance_schema", "sys")
GEOMETRIES = ("geometry", "linestring", "polygon", "multipoint", "multilinestring", "multipolygon",
              "geometrycollection", "geomcollection")
_TABLES = ("SELECT CONCAT(TABLE_SCHEMA, '.', TABLE_NAME) FROM information_schema.TABLES "
           "WHERE TABLE_TYPE IN ('BASE TABLE', 'SYSTEM VERSIONED') "  # MariaDB's WITH SYSTEM VERSIONING tables
           f"AND TABLE_SCHEMA NOT IN ({', '.join(repr(s) for s in SYSTEM_SCHEMAS)}) "
           "ORDER BY 1")


def kind_of(data_type: str, column_type: str, precision: int | None) -> str:
    t, full = data_type.lower(), column_type.lower()
    simple = {"date": "date", "datetime": "timestamp", "timestamp": "timestamptz", "time": "time", "json": "json",
              "float": "float6", "double": "float8", "point": "point"}
    if t in simple:
        return simple[t]
    if t in GEOMETRIES:
        return "geometry"  # Debezium's io.debezium.data.geometry.Geometry: a struct {wkb, srid}
    if t == "decimal" or (t == "bigint" and "unsigned" in full):
        return "decimal"
    if t in ("blob", "tinyblob", "mediumblob", "longblob", "binary", "varbinary"):
        return "bytes"
    if t == "bit":  # BIT(1) lands as a boolean, BIT(n) as its text '10110' (lake_types.bits_expr)
        n = full[len("bit("):-1] if full.startswith("bit(") else "1"
        return "bit1" if n == "1" else f"bits:{n}"
    return "plain"


def read_columns(conn, t: src.SourceTable) -> list[Column]:
    """The table's columns, each under its lake name ("Order Date" lands as Order_Date) with its own; [] when
    the table does not exist."""
    with conn.cursor() as cur:
        cur.execute("SELECT COLUMN_NAME, DATA_TYPE, COLUMN_TYPE, DATETIME_PRECISION FROM information_schema.COLUMNS "
                    "WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (t.schema, t.table))
        rows = cur.fetchall()
    return [Column.of(str(name), str(ctype), kind_of(str(dtype), str(ctype), prec))
            for name, dtype, ctype, prec in rows]


def columns(conn, t: src.SourceTable) -> list[Column]:
    cols = read_columns(conn, t)
    if not cols:
        raise TableStateError(f"table {t.qualified} not found in the source database")
    return cols


def quote(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"


# column types MariaDB has that Debezium's MariaDB DDL grammar does not parse (3.x: `no viable alternative` at the
# type in SHOW CREATE TABLE or the binlog's DDL, which stops the connector): measured on MariaDB 10.11
UNPARSEABLE_TYPES = ("inet4", "inet6")


VERSIONED_WHY = ("WITH SYSTEM VERSIONING: its binlog rows carry the hidden row_start / row_end columns, which "
                 "Debezium's schema of the table lacks (measured: \"internal schema size 2, but row size 4\": the "
                 "connector stopped for every table); ALTER TABLE ... DROP SYSTEM VERSIONING to capture it")


def system_versioned(pipeline: Pipeline, tables: list[src.SourceTable]) -> set[str]:
    """The <database>.<table> of `tables` that are MariaDB system-versioned tables."""
    from hudi_cdc.sources.mysql import binlog

    if not tables:
        return set()
    conn = binlog.connect(pipeline)
    try:
        with conn.cursor() as cur:
            marks = ", ".join(["(%s, %s)"] * len(tables))
            cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME FROM information_schema.TABLES WHERE TABLE_TYPE = "
                        f"'SYSTEM VERSIONED' AND (TABLE_SCHEMA, TABLE_NAME) IN ({marks})",
                        [v for t in tables for v in (t.schema, t.table)])
            return {f"{s}.{t}" for s, t in cur.fetchall()}
    finally:
        conn.close()


def unparseable_columns(pipeline: Pipeline, tables: list[src.SourceTable]) -> dict[str, list[tuple[str, str]]]:
    """{<database>.<table>: [(column, type)]} of `tables` holding a column of a type in UNPARSEABLE_TYPES."""
    from hudi_cdc.sources.mysql import binlog

    if not tables:
        return {}
    conn = binlog.connect(pipeline)
    try:
        with conn.cursor() as cur:
            marks = ", ".join(["(%s, %s)"] * len(tables))
            cur.execute("SELECT TABLE_SCHEMA, TABLE_NAME, COLUMN_NAME, DATA_TYPE FROM information_schema.COLUMNS "
                        f"WHERE (TABLE_SCHEMA, TABLE_NAME) IN ({marks}) AND LOWER(DATA_TYPE) IN "
                        f"({', '.join(['%s'] * len(UNPARSEABLE_TYPES))}) ORDER BY ORDINAL_POSITION",
                        [v for t in tables for v in (t.schema, t.table)] + list(UNPARSEABLE_TYPES))
            out: dict[str, list[tuple[str, str]]] = {}
            for schema, table, column, data_type in cur.fetchall():
                out.setdefault(f"{schema}.{table}", []).append((str(column), str(data_type).upper()))
            return out
    finally:
        conn.close()


def table_names(pipeline: Pipeline) -> list[str]:
    """Every base table of the server's user databases as <database>.<table> (a route's pattern)."""
    from hudi_cdc.sources.mysql import binlog

    conn = binlog.connect(pipeline)
    try:
        with conn.cursor() as cur:
            cur.execute(_TABLES)
            return [str(r[0]) for r in cur.fetchall()]
    finally:
        conn.close()
