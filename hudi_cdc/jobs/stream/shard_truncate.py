"""A TRUNCATE of one source table of a routed table (routed.py): that shard's rows go, the other shards' stay.

A routed table's events carry their shard in the route's column (``routed.with_source_column``), its
TRUNCATEs too (truncate.py: capture lands one as a row with ``__op='t'`` at the truncate's position). Where an
unrouted table's TRUNCATE overwrites the whole table, a round of a routed table that holds truncate rows
(``cuts``: the newest one per shard, T_s, read before the round keeps one event per key):

- drops every event of shard s at or before T_s, and the truncate rows;
- adds a delete at T_s for every key of shard s that the table holds and that no remaining event of the
  round writes (a key-only delete: the round locates its stored partition as for Debezium's deletes);
  the round's tombstones (tombstones.py) then keep a late event of that key from before T_s out;
- writes as any round: an upsert, no overwrite, so the other shards' rows stay as they are.

A row inserted and truncated before the round read it is dropped with its events. Not covered: an event of
shard s from before T_s that lands in a later round for a key the table did not hold at T_s (a file landed
late out of order); capture lands a table's events in order, so it needs a redelivery across rounds.
"""

from __future__ import annotations

from hudi_cdc.common.routing import Route
from hudi_cdc.jobs.stream import keyjoin, truncate

DELETED = "_hoodie_is_deleted"


def cuts(df, route: Route, ordering: list[str]) -> dict[str, list]:
    """{shard: the ordering values of its newest TRUNCATE} among the round's events (one small job)."""
    from pyspark.sql import functions as F

    newest = F.max(F.struct(*[F.col(o).alias(o) for o in ordering])).alias("at")
    rows = df.where(truncate.is_truncate(df)).groupBy(route.column).agg(newest).collect()
    return {r[route.column]: [r["at"][o] for o in ordering] for r in rows}


def apply(spark, df, base_path: str, route: Route | None, ordering: list[str], record_keys: list[str],
          shard_cuts: dict[str, list], existing: bool, log, table: str):
    """The round's events with each truncated shard's older events gone and its stored rows deleted."""
    from pyspark.sql import functions as F

    assert route is not None  # cuts() found the truncates of a routed table
    col = F.col(route.column)
    older = F.lit(False)
    for shard, values in shard_cuts.items():
        older = older | ((col == F.lit(shard)) & ~truncate._after(ordering, values))
    df = df.where(~older & ~truncate.is_truncate(df))
    log(f"{table}: TRUNCATE of {', '.join(sorted(shard_cuts))}: their rows before it go, the other shards' stay")
    if not existing:
        return df
    if DELETED not in df.columns:
        df = df.withColumn(DELETED, F.lit(False))
    stored = (spark.read.format("hudi").load(base_path).where(col.isin(list(shard_cuts)))
              .select(*dict.fromkeys([*record_keys, route.column])))
    gone = keyjoin.join(stored, df.select(*record_keys).distinct(), record_keys, "left_anti")
    types = dict(df.dtypes)
    at = []
    for i, o in enumerate(ordering):
        value = None
        for shard, values in shard_cuts.items():
            when = (F.col(route.column) == F.lit(shard))
            value = F.when(when, F.lit(values[i])) if value is None else value.when(when, F.lit(values[i]))
        assert value is not None  # shard_cuts is not empty
        at.append(value.cast(types[o]).alias(o))
    deletes = gone.select(*[F.col(c) for c in gone.columns if c not in ordering], *at, F.lit(True).alias(DELETED))
    return df.unionByName(deletes, allowMissingColumns=True)
