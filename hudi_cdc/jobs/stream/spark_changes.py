"""A round's changes through Spark (round.py): the landed files read, typed and reduced to the latest event per
key (events.py), a TRUNCATE's split, deletes against earlier rounds' tombstones, the keys located (located.py) or
left to Hudi's index. driver_round.py makes a small MoR round's without Spark."""

from __future__ import annotations

from hudi_cdc.jobs.stream import (
    driver_lookup,
    keytext,
    log_inserts,
    logkeys,
    materialize,
    routed,
    shard_truncate,
    truncate,
)
from hudi_cdc.jobs.stream import history_write as history
from hudi_cdc.jobs.stream.argv import Target
from hudi_cdc.jobs.stream.changes import Changes
from hudi_cdc.jobs.stream.events import fields_of, read_events
from hudi_cdc.jobs.stream.located import key_shape, locate, unlocatable
from hudi_cdc.jobs.stream.redelivery import drop_unchanged
from hudi_cdc.jobs.stream.summary import DELETED, KEYS, SMALL_ROUND, summarize
from hudi_cdc.jobs.stream.tombstones import drop_stale_after_delete, read_tombstones


def prepare(spark, t: Target, props: dict[str, str], root: str, picked: tuple, result,
            held: materialize.Held, log, clock: float) -> tuple[Changes, float]:
    """The round's changes through Spark: the files read, typed and reduced to the latest event per key, deletes
    against tombstones, TRUNCATEs, the keys located."""
    from pyspark.sql import functions as F

    existing, checkpoint, files = picked[0], picked[1], picked[2]
    ordering = fields_of(t.source_ordering_fields or props.get("hoodie.table.ordering.fields"))
    every_event: list | None = [] if history.enabled(props) else None
    df, record_keys, summary = read_events(spark, t, props, root, files, ordering, result, held, log, every_event)
    if result.shard_truncates:  # a TRUNCATE of some of a routed table's source tables
        df, summary = shard_truncate.apply(spark, df, t.target_base_path, routed.route_of(props), ordering, record_keys,
                                           result.shard_truncates, existing, log, t.target_table), None
    # A round's changes are cached once (a wide table's small round: computed now, materialize.py): the counts, the
    # lookups and the write all read them. A bootstrap's snapshot is not (caching every row costs more than reading
    # the files again).
    bulk = t.op == "BULK_INSERT"
    df = events = df if bulk else held.once_or_cache(df)
    floor = truncate.read_floor(t.target_base_path, checkpoint) if existing else None
    if result.truncate_seen is not None or floor is not None:
        df, result.truncated_at = truncate.split(df, ordering, result.truncate_seen, floor)
        summary = None
    if summary is None:  # the events were reduced to one per key (a small round's deletes and keys collected with it)
        summary = _summary(df, events, bulk, props, record_keys, ordering, result)
    clock = result.lap("read", clock)
    is_delete = "_hoodie_is_deleted" in df.columns
    deleted_keys: list[dict] = []
    if is_delete:
        df, deleted_keys = _deletes(spark, t, df, summary, record_keys, ordering, checkpoint, result, log)
        clock = result.lap("tombstones", clock)
    located = None
    overwrite = result.truncated_at is not None and existing and t.op != "BULK_INSERT"
    if overwrite or (t.op == "BULK_INSERT" and is_delete):
        # Nothing to delete in a new table, or in one a TRUNCATE empties: a deleted row is simply absent.
        df = df.where(~F.col("_hoodie_is_deleted")) if is_delete else df
    mor_lookup = t.table_type == "MERGE_ON_READ" and logkeys.enabled(props)  # logkeys.py
    if t.op != "BULK_INSERT" and existing and ordering and not overwrite:
        df, located = _locate_keys(spark, t, props, df, record_keys, ordering, result, log, mor_lookup, summary)
        clock = result.lap("locate" if located else "redelivery", clock)
    return Changes(df, located, summary, deleted_keys, record_keys, ordering, located is not None and mor_lookup,
                    (events, df, *(every_event or ())), every_event, floor, bool(overwrite)), clock


def _summary(df, events, bulk: bool, props: dict[str, str], record_keys: list[str], ordering: list[str],
             result) -> dict:
    """The round's summary when the events pass could not give it (summary.py): a small round's deletes and keys
    collected with it, a bootstrap's composite key parts its row writer cannot write counted (keytext.py)."""
    fold = df is events and "_hoodie_is_deleted" in df.columns and result.records_in <= SMALL_ROUND
    parts = keytext.parts_to_count(props, record_keys, bulk)
    return summarize(df if bulk and result.truncate_seen is not None else events, ordering,
                     deleted=[*record_keys, *ordering] if fold else None, keys=record_keys if fold else None,
                     key_parts=parts)


def _deletes(spark, t: Target, df, summary: dict, record_keys: list[str], ordering: list[str],
             checkpoint, result, log) -> tuple[object, list[dict]]:
    """Hard deletes leave no row to compare a late event with, so the keys and ordering values of deletes
    are kept as tombstones (returned, written around the commit); events no newer than an earlier
    round's tombstones are dropped."""
    from pyspark.sql import functions as F

    deleted_keys: list[dict] = []
    if DELETED in summary:  # a small round's, from its summary pass
        deleted_keys = summary.pop(DELETED)
    elif summary.get("deletes"):
        deleted_keys = [r.asDict() for r in
                        df.where(F.col("_hoodie_is_deleted")).select(*record_keys, *ordering).collect()]
    result.deletes = len(deleted_keys)
    tombstones = read_tombstones(t.target_base_path, checkpoint, record_keys, ordering) if t.op != "BULK_INSERT" else []
    if tombstones and ordering:
        df, result.stale_ignored = drop_stale_after_delete(spark, df, tombstones, record_keys, ordering)
        if result.stale_ignored:
            log(f"{t.target_table}: ignored {result.stale_ignored} stale event(s) "
                "for keys deleted by a newer change")
    return df, deleted_keys


def _locate_keys(spark, t: Target, props: dict[str, str], df, record_keys: list[str], ordering: list[str],
                 result, log, mor_lookup: bool, summary: dict):
    """Events no newer than the stored row dropped: hudi-cdc finds each key's file group itself
    (located.py) when it can (returned, the records then carry their locations), else Hudi's index does.
    A small round's summary holds its key tuples (KEYS): the driver's lookup needs no pass of its own."""
    shape, why_not = key_shape(props) if not t.filter_dupes else (None, "--filter-dupes")
    into_logs = log_inserts.enabled(props, t.table_type)
    targets = log_inserts.targets(t.target_base_path, props) if shape and into_logs else None
    located = locate(spark, df, t.target_base_path, shape, ordering, log, mor=mor_lookup,
                     insert_targets=targets, driver=driver_lookup.enabled(props),
                     round_keys=summary.get(KEYS)) if shape else None
    if located is not None:
        df, result.unchanged_ignored, result.moves = located.df, located.unchanged, located.moves
        result.ignored_deletes = located.ignored_deletes
    else:
        if shape is not None:
            why_not = unlocatable(df, shape) or "the keys as stored (above)"
        log(f"{t.target_table}: keys located by Hudi's index ({why_not})")
        if t.table_type == "MERGE_ON_READ":
            log_inserts.compact_before_index(spark, t.target_base_path, t.target_table, log)
        df, result.unchanged_ignored = drop_unchanged(spark, df, t.target_base_path, record_keys, ordering, log)
    if result.unchanged_ignored:
        log(f"{t.target_table}: ignored {result.unchanged_ignored} event(s) no newer than the stored row")
    return df, located
