"""`verify`'s database side of a MySQL-family table: the FROM it reads and its columns. A routed table
(docs/shaping.md#routing) reads the UNION ALL of its shards as a derived table, each row with the route's
source column (``<database>.<table>``, as the streamer names the shard from its topic folder); the shaping
(shaped.py) selects over it. A derived table rather than PostgreSQL's temporary view: MySQL and MariaDB
have no temporary views, and verify's user needs nothing beyond SELECT."""

from __future__ import annotations

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import TableStateError
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.comparison import Column
from hudi_cdc.sources.mysql.catalog import columns, quote, read_columns, table_names
from hudi_cdc.sources.routes import resolved

ALIAS = "hudi_cdc_routed"


def _name(t: src.SourceTable) -> str:
    return f"{quote(t.schema)}.{quote(t.table)}"


def _literal(text: str) -> str:
    return "'" + text.replace("\\", "\\\\").replace("'", "''") + "'"


def source_from(conn, pipeline: Pipeline, table: str) -> tuple[str, list[Column]]:
    """(the FROM clause, its columns) of a lake table: its one source table, or its shards' UNION ALL with the
    source column first (a pattern's shards listed from the database now: sources/routes.py)."""
    route = pipeline.table(table).route
    if route is None:
        st = src.source_table(pipeline, table)
        return _name(st), columns(conn, st)
    shards = src.shards(resolved(pipeline, lambda: table_names(pipeline)), table)
    first: list[Column] | None = None
    for shard in shards:
        have = read_columns(conn, shard)
        if not have:
            raise TableStateError(f"tables.{table}.route: source table {shard.qualified} not found in the database")
        first = first or have
        names = {c.db_name for c in have}
        missing = [c.db_name for c in first if c.db_name not in names]
        if missing:
            raise TableStateError(f"tables.{table}.route: {shard.qualified} has no column {missing[0]} "
                                  f"({shards[0].qualified} has)")
    assert first is not None  # a route has at least one shard (config/route.py; resolved: a pattern matched)
    return union_sql(shards, first, route.source_column), [Column(route.source_column, "varchar", "plain"), *first]


def union_sql(shards: list[src.SourceTable], cols: list[Column], source_column: str) -> str:
    """The shards' UNION ALL as a derived table, each row with its shard's <database>.<table> first."""
    parts = [f"SELECT {_literal(shard.qualified)} AS {quote(source_column)}, "
             f"{', '.join(quote(c.db_name) for c in cols)} FROM {_name(shard)}" for shard in shards]
    return f"({' UNION ALL '.join(parts)}) AS {ALIAS}"
