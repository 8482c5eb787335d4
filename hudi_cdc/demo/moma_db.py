"""The embedded MoMA sample as PostgreSQL tables, and seed 001's changes as the SQL the seed ran.

The tables' columns follow the sink files' Avro value schemas (hudi_cdc/data/moma/*.avsc: int ->
integer, string -> text, the record key the primary key), so what Debezium captures from them has the
sample files' very schema. Rows are hudi_cdc.sample.snapshot_rows, loaded with COPY. Used by
`hudi-cdc demo --from-postgres` (hudi_cdc/demo/postgres.py) and the capture tests.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from hudi_cdc import sample

Progress = Callable[[str], None]
TABLES = ("artists", "artworks")
_PG_TYPES = {"int": "integer", "long": "bigint", "string": "text", "boolean": "boolean", "double": "double precision"}

# Seed 001's statements, as the seed's text writes them (artworks: the four updates of 128447 and the
# later 1959 -> 1960 update the text describes in prose; artists: five updates of 299, then its delete).
# hudi_cdc/data/moma/seed_changes.json holds the same changes as landed events (tests/demo/test_moma_db.py).
SEED_STATEMENTS = (
    "UPDATE artworks SET date = 1959 WHERE artwork_id = 128447;",
    "UPDATE artworks SET acquisition_date = '2009-04-15' WHERE artwork_id = 128447;",
    "UPDATE artworks SET dimensions = 'composition: 20 13/16 x 25 3/16 in (52.9 x 64 cm); sheet: 24 7/16 x 29 1/2 in "
    "(62.1 x 75 cm)' WHERE artwork_id = 128447;",
    "UPDATE artworks SET acquisition_date = '2009-04-19' WHERE artwork_id = 128447;",
    "UPDATE artworks SET date = 1960 WHERE artwork_id = 128447;",
    "UPDATE public.artists SET birth_year = 1907 WHERE artist_id = 299;",
    "UPDATE public.artists SET death_year = 1989 WHERE artist_id = 299;",
    "UPDATE public.artists SET name = 'Gerhard M. Bakker' WHERE artist_id = 299;",
    "UPDATE public.artists SET nationality = 'German' WHERE artist_id = 299;",
    "UPDATE public.artists SET birth_year = 1905 WHERE artist_id = 299;",
    "DELETE FROM public.artists WHERE artist_id = 299;",
)
DELETED_ARTIST = 299


def columns(table: str) -> list[tuple[str, str, bool]]:
    """(name, PostgreSQL type, nullable) of the table's columns, from its value schema."""
    out = []
    for f in sample.schema(table)["fields"]:
        if f["name"].startswith("__"):
            continue
        t = f["type"]
        nullable = isinstance(t, list) and "null" in t
        base = next(x for x in t if x != "null") if isinstance(t, list) else t
        out.append((f["name"], _PG_TYPES[base], nullable))
    return out


def ddl(table: str, schema: str = "public") -> str:
    key = sample.KEYS[table]
    cols = []
    for name, typ, nullable in columns(table):
        extra = " PRIMARY KEY" if name == key else ("" if nullable else " NOT NULL")
        cols.append(f"{name} {typ}{extra}")
    return f"CREATE TABLE IF NOT EXISTS {schema}.{table} ({', '.join(cols)})"


def copy_rows(conn, table: str, names: Sequence[str], rows: Iterable[Sequence]) -> int:
    """COPY rows (value lists in the order of ``names``) into ``table``; returns how many."""
    from psycopg import sql

    n = 0
    stmt = sql.SQL("COPY {} ({}) FROM STDIN").format(sql.Identifier(table),
                                                     sql.SQL(", ").join(sql.Identifier(c) for c in names))
    with conn.cursor().copy(stmt) as cp:
        for r in rows:
            cp.write_row(r)
            n += 1
    return n


def load_table(conn, table: str, limit: int | None = None) -> int:
    """Create the table (if missing) and COPY the sample's rows (the first ``limit``) into it."""
    conn.execute(ddl(table))
    names = [c[0] for c in columns(table)]
    rows = sample.snapshot_rows(table)[:limit]
    return copy_rows(conn, table, names, ([r[c] for c in names] for r in rows))


def load_sample(conn, progress: Progress, tables: Sequence[str] = TABLES) -> dict[str, int]:
    """Create and fill the tables that are missing or empty (idempotent: a table holding rows is left
    alone). Returns the rows loaded per table. One transaction per table (``conn`` not autocommit)."""
    loaded = {}
    for table in tables:
        with conn.transaction():
            conn.execute(ddl(table))
            have = conn.execute(f"SELECT count(*) FROM public.{table}").fetchone()[0]
            if have:
                progress(f"public.{table} holds {have} rows already: not loaded again")
                loaded[table] = 0
                continue
            loaded[table] = load_table(conn, table)
        progress(f"loaded public.{table}: {loaded[table]} rows of the MoMA sample (COPY)")
    return loaded


def seed_applied(conn) -> bool:
    """Seed 001's changes end with the delete of artist 299: once it is gone they were all applied."""
    row = conn.execute("SELECT 1 FROM public.artists WHERE artist_id = %s", (DELETED_ARTIST,)).fetchone()
    return row is None


def apply_seed_changes(conn, progress: Progress) -> int:
    """Run seed 001's statements, each its own transaction as the seed did (``conn`` in autocommit);
    nothing when they ran already. Returns how many ran."""
    if seed_applied(conn):
        progress(f"seed 001's changes applied already (artist {DELETED_ARTIST} is gone): not run again")
        return 0
    for st in SEED_STATEMENTS:
        conn.execute(st)
        progress(f"ran {st}")
    return len(SEED_STATEMENTS)
