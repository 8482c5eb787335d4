"""Rows as the query commands print them: Hudi's bookkeeping columns trimmed, the commit's
wall-clock time beside its instant, sorted by record key."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hudi_cdc.query.timeline import QueryTable

HIDDEN_META = ("_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_file_name", "_hoodie_is_deleted")
COMMIT_TIME = "_hoodie_commit_time"
PARTITION = "_hoodie_partition_path"


def _sort_key(keys: Sequence[str]):
    """By record key, then partition and commit: a key can be in two partitions at once (a
    read-optimized view between a partition move and the compaction of the old file group)."""
    def key(row: dict[str, Any]):
        return tuple((row.get(k) is None, str(type(row.get(k))), row.get(k) if row.get(k) is not None else "")
                     for k in [*keys, PARTITION, COMMIT_TIME])

    return key


def shape(qt: QueryTable, rows: list[dict[str, Any]], columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """Each row with _hoodie_commit_time, committed_at (wall clock, UTC), the partition path and
    the record's columns (or only `columns`), sorted by record key."""
    out = []
    for r in rows:
        row: dict[str, Any] = {}
        if COMMIT_TIME in r:
            row[COMMIT_TIME] = r[COMMIT_TIME]
            row["committed_at"] = qt.committed_at(r[COMMIT_TIME])
        if PARTITION in r:
            row[PARTITION] = r[PARTITION]
        for k, v in r.items():
            if k.startswith("_hoodie_") and (k in HIDDEN_META or k in row):
                continue
            if columns and k not in columns and k not in qt.record_keys:
                continue
            row[k] = v
        out.append(row)
    out.sort(key=_sort_key(qt.record_keys))
    return out

