"""`init --from-database` of a MySQL-family source (MySQL, Aurora MySQL, MariaDB): the tables of the
chosen databases read from information_schema as db_tables.DbTable entries, which sources/init.py turns into
the pipeline file's tables the same way as PostgreSQL's.

- record_key: the primary key; without one, the first unique index whose columns are all NOT NULL
  (no prefix or expression parts), with the fix capture's `source check` asks for (ADD PRIMARY KEY
  on those columns); neither: the table is left out with the fix (sources/init.py).
- Deletes carry the whole row (capture needs binlog_row_image=FULL), so a partition field is never
  null in a delete: the comment says so instead of PostgreSQL's replica identity.
- Partition candidates: the text, date, enum and small integer columns (as PostgreSQL's).
"""

from __future__ import annotations

from hudi_cdc.config.settings import DatabaseSettings
from hudi_cdc.errors import ConfigError
from hudi_cdc.sources.db_tables import DbTable, UniqueIndex
from hudi_cdc.sources.mysql.catalog import UNPARSEABLE_TYPES, VERSIONED_WHY

CANDIDATE_TYPES = ("varchar", "char", "text", "tinytext", "date", "enum", "tinyint", "smallint", "mediumint", "int",
                   "year", "bit")
NOTE = "binlog row image FULL (deletes carry the whole row)"


def _rows(conn, sql: str, args=()) -> list[tuple]:
    with conn.cursor() as cur:
        cur.execute(sql, args)
        return list(cur.fetchall())


def unique_index(conn, schema: str, table: str, nullable: set[str]) -> UniqueIndex | None:
    """The first unique index (by name) whose parts are whole NOT NULL columns."""
    parts: dict[str, list[tuple[int, str | None, object]]] = {}
    for name, seq, col, sub in _rows(conn, "SELECT INDEX_NAME, SEQ_IN_INDEX, COLUMN_NAME, SUB_PART FROM "
                                           "information_schema.STATISTICS WHERE TABLE_SCHEMA = %s AND TABLE_NAME = %s "
                                           "AND NON_UNIQUE = 0 AND INDEX_NAME <> 'PRIMARY'", (schema, table)):
        parts.setdefault(str(name), []).append((int(seq), None if col is None else str(col), sub))
    for name in sorted(parts):
        cols = [c for _, c, _ in sorted(parts[name], key=lambda p: p[0])]
        if all(c is not None and c not in nullable for c in cols) and all(s is None for _, _, s in parts[name]):
            return UniqueIndex(name, tuple(c for c in cols if c is not None))
    return None


def introspect(conn, schemas: list[str], only: list[str] | None = None) -> list[DbTable]:
    """The base tables of `schemas` (databases), or exactly `only` (database.table or table)."""
    marks = ",".join(["%s"] * len(schemas))
    found = _rows(conn, "SELECT TABLE_SCHEMA, TABLE_NAME, TABLE_TYPE FROM information_schema.TABLES WHERE TABLE_TYPE "
                        f"IN ('BASE TABLE', 'SYSTEM VERSIONED') AND TABLE_SCHEMA IN ({marks}) "
                        "ORDER BY TABLE_SCHEMA, TABLE_NAME", tuple(schemas))
    wanted = None if not only else {t if "." in t else f"{schemas[0]}.{t}" for t in only}
    out = []
    for schema, table, kind in ((str(s), str(t), str(k)) for s, t, k in found):
        if wanted is not None and f"{schema}.{table}" not in wanted:
            continue
        cols = _rows(conn, "SELECT COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE FROM information_schema.COLUMNS WHERE "
                           "TABLE_SCHEMA = %s AND TABLE_NAME = %s ORDER BY ORDINAL_POSITION", (schema, table))
        pk = [str(r[0]) for r in _rows(conn, "SELECT COLUMN_NAME FROM information_schema.STATISTICS WHERE "
                                             "TABLE_SCHEMA = %s AND TABLE_NAME = %s AND INDEX_NAME = 'PRIMARY' "
                                             "ORDER BY SEQ_IN_INDEX", (schema, table))]
        t = DbTable(schema, table, [(str(n), str(ct).lower()) for n, ct, _ in cols], pk, "f", note=NOTE,
                    candidate_types=CANDIDATE_TYPES)
        bad = [f"{n} is {ct.upper()}" for n, ct in t.columns if ct.split("(")[0] in UNPARSEABLE_TYPES]
        if bad:
            t.uncapturable = (f"{', '.join(bad)}, a type Debezium's DDL parser does not know (capture would stop); "
                              "change it (e.g. VARCHAR(39)) to capture the table")
        elif kind == "SYSTEM VERSIONED":
            t.uncapturable = VERSIONED_WHY
        if not pk:
            t.unique_index = unique_index(conn, schema, table, {str(n) for n, _, nl in cols if str(nl) == "YES"})
            if t.unique_index is not None:
                t.key_fix = (f"ALTER TABLE {t.qualified} ADD PRIMARY KEY ({', '.join(t.unique_index.columns)}); "
                             "(source check asks for a primary key)")
        out.append(t)
    if wanted is not None:
        missing = sorted(wanted - {t.qualified for t in out})
        if missing:
            raise ConfigError(f"--table: no such table in the database: {', '.join(missing)}")
    return out


def read_tables(db: DatabaseSettings, password: str | None, schemas: list[str],
                only: list[str] | None = None) -> list[DbTable]:
    from hudi_cdc.sources.mysql.binlog import connect_to

    conn = connect_to(db, password)
    try:
        return introspect(conn, schemas, only)
    finally:
        conn.close()
