"""Append-only raw history: a table without a primary key or usable unique index (pgbench_history)
landed as every change event a row.

The record key is the event's position, ``__lsn`` (each row change has its own WAL record), followed
by the row's columns (rows of one snapshot share the snapshot's LSN; so do the rows of one multi-row
WAL record, e.g. COPY): two events are one lake row only when they are the same change delivered
again. Deletes are soft (``deletes: soft``): a delete event is a row too, ``__op = 'd'``,
``__deleted = 'true'``, carrying the old row. PostgreSQL needs ``REPLICA IDENTITY FULL`` on such a
table before it is published with updates and deletes (the publication is per pipeline and
Debezium reads one publication, so an insert-only publication would drop every table's updates):
with FULL the application's UPDATE and DELETE keep working and each delete event carries the whole
old row. ``verify`` compares such a table as a multiset: the database's rows against the landed
inserts and snapshot rows minus the deleted rows (an UPDATE's old row version is not in its event,
so after updates the old versions show as extra rows).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

POSITION = "__lsn"
OP = "__op"
KEYGEN_OPTION = "hoodie.datasource.write.keygenerator.class"
COMPLEX_KEYGEN = "org.apache.hudi.keygen.ComplexKeyGenerator"


def history_key(columns: Sequence[str]) -> list[str]:
    """The record key of a raw history table: the event position, then every column."""
    return [POSITION, *columns]


def is_history(record_keys: Sequence[str]) -> bool:
    """Is a table with this record key a raw history (its key starts with the event position)?"""
    return bool(record_keys) and record_keys[0] == POSITION


def entry_lines(qualified: str, columns: Sequence[str], identity: str, i2: str) -> list[str]:
    """The pipeline file lines (after topic) that make a keyless table a raw history."""
    keys = "[" + ", ".join(history_key(columns)) + "]"
    out = [f"{i2}# no primary key or usable unique index: an append-only raw history, every change event a row"]
    if identity != "f":
        out.append(f"{i2}# before capture: ALTER TABLE {qualified} REPLICA IDENTITY FULL;  (the application's "
                   "UPDATE/DELETE keep working)")
    out += [f"{i2}record_key: {keys}  # the event position, then the row",
            f"{i2}deletes: soft  # a delete event is a row too (__op = d)",
            f"{i2}hudi_options:  # a null column in the key is __null__ (the non-partitioned generator refuses it)",
            f"{i2}  {KEYGEN_OPTION}: {COMPLEX_KEYGEN}"]
    return out


def replay(ops: Sequence[str | None], digests: Sequence[bytes]) -> tuple[Counter, int]:
    """The rows a raw history says the table holds (inserts and snapshot rows minus deleted rows,
    updates added as their new version; a count may end negative: a delete of a row never seen), and
    how many update events it holds."""
    rows: Counter = Counter()
    updates = 0
    for op, d in zip(ops, digests, strict=True):
        if op == "t":
            continue  # a TRUNCATE's placeholder row is never written (jobs/stream/truncate.py)
        if op == "d":
            rows[d] -= 1
        else:
            rows[d] += 1
            updates += op == "u"
    return rows, updates


def differences(db: Counter, lake: Counter) -> tuple[list[bytes], list[bytes]]:
    """(rows the lake lacks, rows the lake has too many of), each row once per copy."""
    missing: list[bytes] = []
    extra: list[bytes] = []
    for d in set(db) | set(lake):
        n = db.get(d, 0) - lake.get(d, 0)
        (missing if n > 0 else extra).extend([d] * abs(n))
    return missing, extra
