"""PostgreSQL catalog queries shared by `source check`, `init --from-database` and capture (one copy each)."""
from __future__ import annotations

from typing import Any

PRIMARY_KEY_SQL = (
    "SELECT a.attname FROM pg_index i JOIN LATERAL unnest(i.indkey) WITH ORDINALITY k(attnum, n) ON true "
    "JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum "
    "WHERE i.indrelid = %s AND i.indisprimary ORDER BY k.n")


def primary_key(conn: Any, oid: int) -> list[str]:
    """The primary key's columns of the table with this oid, in key order ([] when it has none)."""
    return [r[0] for r in conn.execute(PRIMARY_KEY_SQL, (oid,))]
