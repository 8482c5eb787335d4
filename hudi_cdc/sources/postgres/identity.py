"""Replica identity: which tables PostgreSQL can publish updates and deletes of.

A table in a publication that publishes updates or deletes must have a usable replica identity (a
primary key with REPLICA IDENTITY DEFAULT, a unique index with USING INDEX, or FULL); otherwise
PostgreSQL rejects the application's own UPDATE and DELETE on it ("cannot update table ... because
it does not have a replica identity and publishes updates"). So capture refuses, before it creates
or alters a publication, when a table it would publish (the pipeline's tables, and every table the
existing publication already publishes) lacks one, naming the table and the fix; `source check` and
`init --from-database` offer the same fixes:
- a unique index on NOT NULL columns (not partial, no expressions): REPLICA IDENTITY USING INDEX, and
  its columns as the record key;
- otherwise REPLICA IDENTITY FULL (the whole old row is logged; the key must still be unique).
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_cdc.errors import SourceError
from hudi_cdc.sources.db_tables import UniqueIndex
from hudi_cdc.sources.tables import sql_ident

IDENTITY = {"d": "DEFAULT", "f": "FULL", "i": "USING INDEX", "n": "NOTHING"}


@dataclass(frozen=True)
class Unusable:
    schema: str
    table: str
    identity: str  # pg_class.relreplident
    index: UniqueIndex | None  # a unique index USING INDEX could name

    @property
    def qualified(self) -> str:
        return f"{self.schema}.{self.table}"

    def fix(self) -> str:
        """The SQL that gives the table a usable replica identity (runnable as it is)."""
        table = f"{sql_ident(self.schema)}.{sql_ident(self.table)}"
        if self.index is not None:
            return f"ALTER TABLE {table} REPLICA IDENTITY USING INDEX {sql_ident(self.index.name)};"
        return f"ALTER TABLE {table} REPLICA IDENTITY FULL;"

    def advice(self) -> str:
        """The fix with what goes with it."""
        if self.index is not None:
            return (f"{self.fix()} (record_key: {', '.join(self.index.columns)}; or REPLICA IDENTITY FULL where "
                    "rows are unique)")
        return f"{self.fix()} (where rows are unique; or add a primary key)"

    def why(self) -> str:
        what = "REPLICA IDENTITY NOTHING" if self.identity == "n" else "no primary key (REPLICA IDENTITY DEFAULT)"
        return f"{self.qualified} has {what}"


def unique_index(conn, oid: int) -> UniqueIndex | None:
    """The first unique, non-partial, expression-free, immediate index whose columns are all NOT NULL
    (what REPLICA IDENTITY USING INDEX accepts), fewest columns first."""
    rows = conn.execute(
        "SELECT ic.relname, array_agg(a.attname ORDER BY k.n), bool_and(a.attnotnull) "
        "FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid "
        "JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, n) ON true "
        "LEFT JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
        "WHERE i.indrelid = %s AND i.indisunique AND i.indimmediate AND i.indpred IS NULL AND i.indexprs IS NULL "
        "AND i.indisvalid GROUP BY ic.relname, i.indnatts ORDER BY i.indnatts, ic.relname", (oid,)).fetchall()
    for name, cols, notnull in rows:
        if notnull and all(c is not None for c in cols):
            return UniqueIndex(name, tuple(cols))
    return None


def unusable(conn, publication: str, tables: list[tuple[str, str]]) -> list[Unusable]:
    """The tables among `tables` (schema, table) and those `publication` publishes already whose
    updates and deletes PostgreSQL would reject once published (missing tables are not reported)."""
    pub = conn.execute("SELECT puballtables, pubupdate OR pubdelete FROM pg_publication WHERE pubname = %s",
                       (publication,)).fetchone()
    if pub is not None and not pub[1]:
        return []  # publishes neither updates nor deletes: nothing PostgreSQL would reject
    if pub is not None and pub[0]:
        extra = "TRUE"  # FOR ALL TABLES: every ordinary table of the database
    else:
        extra = ("(n.nspname, c.relname) IN (SELECT schemaname::name, tablename::name FROM pg_publication_tables "
                 "WHERE pubname = %(pub)s)")
    schemas = [s for s, _ in tables]
    names = [t for _, t in tables]
    rows = conn.execute(
        "SELECT c.oid, n.nspname, c.relname, c.relreplident FROM pg_class c "
        "JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE c.relkind IN ('r', 'p') AND NOT c.relispartition "
        "AND n.nspname NOT IN ('pg_catalog', 'information_schema') "
        "AND (c.relreplident = 'n' OR (c.relreplident = 'd' AND NOT EXISTS "
        "  (SELECT 1 FROM pg_index i WHERE i.indrelid = c.oid AND i.indisprimary))) "
        "AND ((n.nspname, c.relname) IN (SELECT * FROM unnest(%(schemas)s::name[], %(names)s::name[])) "
        f"OR {extra}) ORDER BY n.nspname, c.relname",
        {"pub": publication, "schemas": schemas, "names": names}).fetchall()
    return [Unusable(s, t, ident, unique_index(conn, oid)) for oid, s, t, ident in rows]


def refuse_unusable(conn, publication: str, tables: list[tuple[str, str]]) -> None:
    """One line naming the first table without a usable replica identity, with its fix (exit 11)."""
    bad = unusable(conn, publication, tables)
    if not bad:
        return
    first = bad[0]
    more = f" (and {len(bad) - 1} more: {', '.join(b.qualified for b in bad[1:])})" if len(bad) > 1 else ""
    raise SourceError(f"{first.why()}: published in {publication}, PostgreSQL would reject its UPDATE and DELETE; "
                      f"nothing was changed. Fix: {first.advice()}{more}")
