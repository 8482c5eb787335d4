"""`init --from-database` of a PostgreSQL source: the ordinary and partitioned tables of the chosen schemas
read from the catalog as db_tables.DbTable entries (primary key, REPLICA IDENTITY, a unique index the
record key can come from), which sources/init.py turns into the pipeline file's tables."""

from __future__ import annotations

from hudi_cdc.config.settings import DatabaseSettings
from hudi_cdc.errors import ConfigError
from hudi_cdc.sources.db_tables import DbTable
from hudi_cdc.sources.postgres import catalog
from hudi_cdc.sources.postgres.db import connect_to
from hudi_cdc.sources.postgres.identity import unique_index


def introspect(conn, schemas: list[str], only: list[str] | None = None) -> list[DbTable]:
    """The ordinary and partitioned tables of `schemas` (or exactly `only`: schema.table or table)."""
    rows = conn.execute(
        "SELECT c.oid, n.nspname, c.relname, c.relreplident FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition "
        "AND n.nspname = ANY(%s) ORDER BY n.nspname, c.relname", (schemas,)).fetchall()
    wanted = None if not only else {t if "." in t else f"{schemas[0]}.{t}" for t in only}
    out = []
    for oid, schema, table, ident in rows:
        if wanted is not None and f"{schema}.{table}" not in wanted:
            continue
        cols = [(n, t) for n, t in conn.execute(
            "SELECT attname, format_type(atttypid, atttypmod) FROM pg_attribute WHERE attrelid = %s AND attnum > 0 "
            "AND NOT attisdropped ORDER BY attnum", (oid,))]
        pk = catalog.primary_key(conn, oid)
        t = DbTable(schema, table, cols, pk, ident, generated=catalog.generated_columns(conn, oid))
        twins = catalog.case_twins([n for n, _ in cols])
        if twins:
            t.uncapturable = catalog.case_twins_why(twins)
        if not pk:
            t.unique_index = unique_index(conn, oid)
            row = conn.execute("SELECT ic.relname FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid "
                               "WHERE i.indrelid = %s AND i.indisreplident", (oid,)).fetchone()
            t.identity_index = row[0] if row else None
        out.append(t)
    if wanted is not None:
        missing = sorted(wanted - {t.qualified for t in out})
        if missing:
            raise ConfigError(f"--table: no such table in the database: {', '.join(missing)}")
    return out


def read_tables(db: DatabaseSettings, password: str | None, schemas: list[str],
                only: list[str] | None = None) -> list[DbTable]:
    with connect_to(db, password) as conn:
        return introspect(conn, schemas, only)
