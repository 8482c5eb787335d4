"""Redelivery without phantom versions: an event no newer than the row the table already holds
for its key (same key, same ordering value: a redelivery; a lower one: a late, stale event)
changes nothing, so it is dropped before the write."""

from __future__ import annotations

from hudi_cdc.jobs.stream import driver_lookup, keyjoin, keyloc, logkeys
from hudi_cdc.jobs.stream.ordering import at_least as ordering_at_least


def read_for_keys(spark, base_path: str, keys: list[str], round_keys, columns: list[str], log=None,
                  mor_ordering: list[str] | None = None):
    """The table's snapshot (a MoR table's logs count) with at least `columns`: only the file groups
    Hudi's record-level index names for the round's keys when the table has that index (keyloc.py),
    else, given the ordering fields of a MoR table, its base files with the keys its logs hold laid over
    them (logkeys.py), else the whole table."""
    pruned = keyloc.pruned_snapshot(spark, base_path, keys, round_keys, columns)
    if pruned is None:
        view = logkeys.stored_view(spark, base_path, columns, mor_ordering, log) if mor_ordering else None
        return view if view is not None else spark.read.format("hudi").load(base_path)
    table, files = pruned
    if log is not None:
        log(f"{base_path}: keys located through the record-level index ({files} file slice(s) read)")
    return table


def stored_for_round(spark, df, base_path: str, keys: list[str], columns: list[str], meta=(), log=None,
                     mor_ordering: list[str] | None = None, driver: bool = False,
                     known_keys: list[tuple] | None = None):
    """The table's rows for the round's keys (a snapshot read: a MoR table's logs count), each of
    `columns` as `__s_<name>` and each of the `meta` columns (Hudi's) as `__s<name>`; and the
    condition joining them to the round's events by key. `driver`: `df` holds one event per key, and a
    small round's rows may be read in the driver (driver_lookup.py), which asks `df` for its key tuples unless
    they are `known_keys`."""
    from pyspark.sql import functions as F

    columns = list(dict.fromkeys(columns))  # an ordering field may be a key field too (a raw history's __lsn)
    on = keyjoin.equal(keys, right="__s_")
    if driver:
        stored = driver_lookup.stored_rows(spark, df, base_path, keys, columns, meta, mor_ordering, log, known_keys)
        if stored is not None:
            return stored, on
    round_keys = df.select(*[F.col(c).alias(f"__s_{c}") for c in keys]).distinct()
    table = read_for_keys(spark, base_path, keys, round_keys, [*meta, *columns], log, mor_ordering)
    stored = table.select(*[F.col(m).alias(f"__s{m}") for m in meta], *[F.col(c).alias(f"__s_{c}") for c in columns])
    stored = keyjoin.join(stored, F.broadcast(round_keys), [f"__s_{c}" for c in keys], "left_semi")
    return stored, on


def drop_unchanged(spark, df, base_path: str, keys: list[str], ordering: list[str], log=None):
    """Remove non-delete events whose key the table already holds with an ordering value at least
    as new (lexicographic over the ordering fields): a redelivered event (same key, same ordering
    value) or a late, stale one. Hudi's EVENT_TIME_ORDERING lets an equal ordering value win, so
    without this a redelivery is written again as a new version that changed nothing.

    Reads only the record key and ordering columns of the table (a snapshot read, so a MoR table's
    log files count), restricted to this round's keys. Returns (dataframe, how many were removed);
    the dataframe is cached (the counts and the write read it again), unpersist it after the write."""
    from pyspark.sql import functions as F

    stored, cond = stored_for_round(spark, df, base_path, keys, keys + ordering, log=log)
    at_least = ordering_at_least([f"__s_{o}" for o in ordering], ordering)  # stored ordering >= event ordering
    assert cond is not None  # a table has record keys here
    unchanged = cond & at_least
    if "_hoodie_is_deleted" in df.columns:
        unchanged = unchanged & ~F.coalesce(F.col("_hoodie_is_deleted"), F.lit(False))
    kept = df.join(stored, unchanged, "left_anti").cache()
    removed = df.count() - kept.count()
    return kept, removed
