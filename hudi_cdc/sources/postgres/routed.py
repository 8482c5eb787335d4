"""`verify`'s database side of a routed table (docs/shaping.md#routing): a temporary view, inside verify's
transaction (rolled back with it), of the UNION ALL of the shards, each row with the route's source column
(``<schema>.<table>``, as the streamer names the shard), read like one table; the shaping view
(shaped.py) goes on top of it."""

from __future__ import annotations

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import TableStateError
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.routes import resolved

VIEW = "hudi_cdc_verify_routed"
_TABLES = ("SELECT n.nspname || '.' || c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
           "WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
           "AND n.nspname NOT LIKE 'pg\\_%' ORDER BY 1")
_COLUMNS = ("SELECT a.attname FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid "
            "JOIN pg_namespace n ON n.oid = c.relnamespace "
            "WHERE n.nspname = %s AND c.relname = %s AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum")


def table_names(pipeline: Pipeline) -> list[str]:
    """Every user table of the database as <schema>.<table> (a route's pattern: sources/routes.py)."""
    from hudi_cdc.sources.postgres import db

    with db.connect(pipeline) as conn:
        return [r[0] for r in conn.execute(_TABLES).fetchall()]


def routed_table(conn, pipeline: Pipeline, table: str) -> src.SourceTable:
    """The UNION ALL of the table's shards with the source column, as a view."""
    from psycopg import sql

    route = pipeline.table(table).route
    assert route is not None
    shards = src.shards(resolved(pipeline, lambda: table_names(pipeline)), table)
    columns: list[str] | None = None
    parts = []
    for shard in shards:
        have = [r[0] for r in conn.execute(_COLUMNS, (shard.schema, shard.table)).fetchall()]
        if not have:
            raise TableStateError(f"tables.{table}.route: source table {shard.qualified} not found in the database")
        columns = columns or have
        missing = [c for c in columns if c not in have]
        if missing:
            raise TableStateError(f"tables.{table}.route: {shard.qualified} has no column {missing[0]} "
                                  f"({shards[0].qualified} has)")
        parts.append(sql.SQL("SELECT {}::text AS {}, {} FROM {}").format(
            sql.Literal(shard.qualified), sql.Identifier(route.source_column),
            sql.SQL(", ").join(sql.Identifier(c) for c in columns), sql.Identifier(shard.schema, shard.table)))
    conn.execute(sql.SQL("CREATE TEMPORARY VIEW {} AS {}").format(sql.Identifier(VIEW),
                                                                  sql.SQL(" UNION ALL ").join(parts)))
    schema = conn.execute("SELECT nspname FROM pg_namespace WHERE oid = pg_my_temp_schema()").fetchone()[0]
    return src.SourceTable(table, pipeline.table(table).topic, schema, VIEW)
