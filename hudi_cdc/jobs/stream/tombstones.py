"""Tombstones: the keys and ordering values of hard deletes, kept beside the table so a later
round can drop events no newer than a delete (a deleted row leaves nothing to compare with).

One JSON-lines file per round in .hoodie/.aux/hudi-cdc-tombstones/cp-<checkpoint>.jsonl, written
BEFORE the round's commit and named by the checkpoint the round commits: it counts once the table's
committed checkpoint has reached it. So a crash between the commit and the end of the round (e.g.
during inline compaction) cannot lose a delete's tombstone, and a failed round's file only counts
when a later round commits past it, by which time that round has applied the same deletes.
(Files named <commit instant>.jsonl, written by earlier releases after the commit, count when their
commit is completed on the active timeline.)

Every round reads every file that counts, so once FOLD_AT of them count they are folded into one: the newest
tombstone of each key (all a later round compares with, drop_stale_after_delete) written over the newest of them,
then the others removed. A crash in between leaves tombstones twice, which changes nothing. Without it a table with
deletes in every round read one more file each round, forever (5,000 files: 0.2 s locally, a GET each on S3)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from hudi_cdc.common import storage
from hudi_cdc.common.instants import completed_write_times
from hudi_cdc.common.properties import local_path
from hudi_cdc.jobs.stream import keyjoin, local_rows
from hudi_cdc.jobs.stream.ordering import at_least as ordering_at_least

if TYPE_CHECKING:
    from pyspark.sql import Column

TOMBSTONE_DIR = (".hoodie", ".aux", "hudi-cdc-tombstones")


def _tombstone_dir(base_path: str) -> str:
    return storage.join(local_path(base_path), *TOMBSTONE_DIR)


_PREFIX = "cp-"


def _counts(name: str, checkpoint: str | None, done: set[str]) -> bool:
    stem = name[:-len(".jsonl")]
    if stem.startswith(_PREFIX):
        return checkpoint not in (None, "") and int(stem[len(_PREFIX):]) <= int(str(checkpoint))
    return stem in done  # written after its commit by earlier releases


FOLD_AT = 32  # counted tombstone files folded into one once there are this many


def read_tombstones(base_path: str, checkpoint: str | None, keys: list[str] | None = None,
                    ordering: list[str] | None = None) -> list[dict]:
    """Tombstones of the rounds the table's committed `checkpoint` has reached. Given the record `keys` and
    `ordering` fields, FOLD_AT or more counted files are folded into one (the module's docstring)."""
    d = _tombstone_dir(base_path)
    names = storage.listdir(d)
    if not names:
        return []
    done = completed_write_times(local_path(base_path))
    rows: list[dict] = []
    counted = [n for n in sorted(names)
               if n.endswith(".jsonl") and not n.startswith(".") and _counts(n, checkpoint, done)]
    for name in counted:
        text = (storage.read_bytes(storage.join(d, name)) or b"").decode("utf-8")
        rows.extend(json.loads(line) for line in text.splitlines() if line.strip())
    ours = [n for n in counted if n.startswith(_PREFIX)]  # earlier releases' files are left as they are
    if keys and ordering and len(ours) >= FOLD_AT:
        rows = newest_per_key(rows, keys, ordering)
        storage.write_bytes(storage.join(d, ours[-1]), _jsonl(rows))  # the newest counted file holds them all
        for name in ours[:-1]:
            storage.delete(storage.join(d, name))
    return rows


def newest_per_key(tombstones: list[dict], keys: list[str], ordering: list[str]) -> list[dict]:
    """Each key's tombstone with the highest ordering value (lexicographic over the ordering fields)."""
    latest: dict[tuple, dict] = {}
    for t in tombstones:
        k = tuple(t.get(c) for c in keys)
        o = tuple(t.get(c) for c in ordering)
        if k not in latest or tuple(latest[k].get(c) for c in ordering) < o:
            latest[k] = t
    return list(latest.values())


def _jsonl(rows: list[dict]) -> bytes:
    return "".join(json.dumps(r, default=str) + "\n" for r in rows).encode("utf-8")


def write_tombstones(base_path: str, checkpoint: str, rows: list[dict]) -> None:
    """Durably, before the round's commit: the deletes of the round that commits `checkpoint`."""
    name = f"{_PREFIX}{int(checkpoint):020d}.jsonl"
    storage.write_bytes(storage.join(_tombstone_dir(base_path), name), _jsonl(rows))


def drop_stale_after_delete(spark, df, tombstones: list[dict], keys: list[str],
                            ordering: list[str]) -> tuple[object, int]:
    """Remove non-delete events whose key was deleted by a change at least as new (lexicographic
    over the ordering fields). Returns (dataframe, how many were removed)."""
    from pyspark.sql import functions as F

    rows = [tuple(t[c] for c in keys + ordering) for t in newest_per_key(tombstones, keys, ordering)]
    names = [f"__t_{c}" for c in keys + ordering]
    types = local_rows.inferred_types(rows, names)  # the types createDataFrame infers, without its Python workers
    tdf = local_rows.frame(spark, rows, names, types) if types else spark.createDataFrame(rows, names)
    for c in keys + ordering:
        tdf = tdf.withColumn(f"__t_{c}", F.col(f"__t_{c}").cast(df.schema[c].dataType))
    cond: Column = keyjoin.equal(keys, right="__t_")
    newer_or_equal = ordering_at_least([f"__t_{o}" for o in ordering], ordering)  # tombstone >= event
    stale_cond = cond & newer_or_equal & ~F.col("_hoodie_is_deleted")
    kept = df.join(tdf, stale_cond, "left_anti")
    removed = df.join(tdf, stale_cond, "left_semi").count()
    return kept, removed
