"""PostgreSQL catalog queries shared by `source check`, `init --from-database` and capture (one copy each)."""
from __future__ import annotations

from typing import Any

PRIMARY_KEY_SQL = (
    "SELECT a.attname FROM pg_index i JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, n) ON true "
    "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
    "WHERE i.indrelid = %s AND i.indisprimary ORDER BY k.n")


# STORED generated columns (PostgreSQL 12+): pgoutput leaves them out of every change before PostgreSQL 18 (and from
# 18 unless the publication sets publish_generated_columns), so Debezium streams them as NULL while its snapshot,
# a SELECT, reads their values
GENERATED_SQL = ("SELECT attname FROM pg_attribute WHERE attrelid = %s AND attnum > 0 AND NOT attisdropped "
                 "AND attgenerated = 's' ORDER BY attnum")


def generated_columns(conn: Any, oid: int) -> list[str]:
    """The table's STORED generated columns (none before PostgreSQL 12, which has none)."""
    if conn.info.server_version < 120000:  # psycopg's, from the connection's start
        return []
    return [r[0] for r in conn.execute(GENERATED_SQL, (oid,))]


def case_twins(columns: list[str]) -> list[str]:
    """Columns whose names differ only in case (`"Name"` and `name`): Debezium refuses such a table ("columns that
    differ only by case"), and its connector stops for every table."""
    seen: dict[str, list[str]] = {}
    for c in columns:
        seen.setdefault(c.lower(), []).append(c)
    return [c for group in seen.values() if len(group) > 1 for c in group]


def case_twins_why(twins: list[str]) -> str:
    return (f"columns {', '.join(twins)} differ only in case, which Debezium refuses (its connector would stop for "
            "every table); rename one")


def primary_key(conn: Any, oid: int) -> list[str]:
    """The primary key's columns of the table with this oid, in key order ([] when it has none)."""
    return [r[0] for r in conn.execute(PRIMARY_KEY_SQL, (oid,))]
