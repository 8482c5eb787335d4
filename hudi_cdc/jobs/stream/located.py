"""A round written with the locations hudi-cdc found itself, so Hudi runs no index lookup.

The redelivery check already reads the table's key and ordering columns for the round's keys (a
snapshot read: a MoR table's logs count). Reading Hudi's meta columns in that same read gives each
stored key's record key, partition path and file group, which is everything a global index finds.
The round is then written as Hudi's Spark SQL UPDATE writes it: "prepped" records that carry their
meta columns (`_hoodie.spark.sql.writes.prepped`), so Hudi neither looks keys up nor merges whole
file groups for partition moves (`hoodie.simple.index.update.partition.path` reads every record of
every file group a moved key lives in: at 1M rows that was most of a round; benchmarks/README.md).

What the global index with update-partition-path did is done here, by key, in one commit:
- an update in the same partition goes to its file group (a MoR log block, a CoW rewrite);
- a key-only delete (partition field null) goes to the partition and file group the key lives in;
- a partition move is a delete in the old file group plus an insert into the new partition;
- an event no newer than the stored row (redelivery, late event) is dropped, as is a delete older
  than the stored row or of a key the table does not hold (Hudi would ignore both).
Every delete carries the event's ordering value, so a MoR delete block holds one ordering type (what
hudi-rs needs; with the global index the move's delete carried int 0 and a round took two commits).

Only for key shapes this module reproduces exactly (Simple / Complex / Nonpartitioned key generators,
hive-style or plain partition paths without URL encoding, string/integral/boolean key and partition
columns, and date, decimal and timestamp key columns as keytext.py writes them), hard deletes, and a global
index that moves rows (what hudi-cdc renders). Each round checks
the record keys and partition paths it computes against the ones Hudi stored for the round's keys;
on any difference the round goes through Hudi's index instead (`locate` returns None)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from hudi_cdc.jobs.stream import keytext, local_rows
from hudi_cdc.jobs.stream.ordering import at_least as ordering_at_least
from hudi_cdc.jobs.stream.redelivery import stored_for_round
from hudi_cdc.jobs.stream.table import META

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
# the writer option of Spark SQL's UPDATE / DELETE: records carry their meta columns and locations
PREPPED_OPTION = "_hoodie.spark.sql.writes.prepped"
# hoodie.streamer.hudi_cdc.locations: "snapshot" (default, this module) or "index" (Hudi's index)
LOCATIONS_PROP = "hoodie.streamer.hudi_cdc.locations"
_KEYGENS = {
    "org.apache.hudi.keygen.SimpleKeyGenerator": "simple",
    "org.apache.hudi.keygen.ComplexKeyGenerator": "complex",
    "org.apache.hudi.keygen.NonpartitionedKeyGenerator": "nonpartitioned",
}
_GLOBAL_MOVING = {"GLOBAL_SIMPLE": "hoodie.simple.index.update.partition.path",
                  "GLOBAL_BLOOM": "hoodie.bloom.index.update.partition.path"}


@dataclass(frozen=True)
class KeyShape:
    """How Hudi's key generator turns a row into its record key and partition path."""

    record_keys: tuple[str, ...]
    partition_fields: tuple[str, ...]
    complex_key: bool
    hive_style: bool


def key_shape(props: dict[str, str]) -> tuple[KeyShape | None, str]:
    """The table's key shape when this module can write its rounds, else (None, why not)."""
    if (props.get(LOCATIONS_PROP) or "snapshot").strip().lower() == "index":
        return None, f"{LOCATIONS_PROP}=index"
    index = (props.get("hoodie.index.type") or "").strip().upper()
    moving = _GLOBAL_MOVING.get(index)
    if moving is None or (props.get(moving) or "true").strip().lower() != "true":
        return None, f"hoodie.index.type={index or 'default'} (not a global index that moves rows)"
    kind = _KEYGENS.get((props.get("hoodie.datasource.write.keygenerator.class") or "").strip())
    if kind is None:
        return None, "a key generator other than Simple/Complex/Nonpartitioned"
    if (props.get("hoodie.datasource.write.partitionpath.urlencode") or "false").strip().lower() == "true":
        return None, "URL-encoded partition paths"
    keys = tuple(k.strip() for k in (props.get("hoodie.datasource.write.recordkey.field") or "").split(",")
                 if k.strip())
    parts = tuple(p.strip() for p in (props.get("hoodie.datasource.write.partitionpath.field") or "").split(",")
                  if p.strip()) if kind != "nonpartitioned" else ()
    if not keys or (kind == "simple" and (len(keys) != 1 or len(parts) != 1)):
        return None, "record key / partition fields the key generator does not take"
    hive = (props.get("hoodie.datasource.write.hive_style_partitioning") or "false").strip().lower() == "true"
    # several key fields: `f1:v1,f2:v2`, from the Complex and the Nonpartitioned key generator alike
    return KeyShape(keys, parts, len(keys) > 1, hive), ""


def _as_text(c):
    from pyspark.sql import functions as F

    return F.col(c).cast("string")


def unlocatable(events, shape: KeyShape) -> str:
    """Why this module cannot write the round's record keys or partition paths ("" when it can): a key
    column of a type keytext.py does not write, a partition column other than a string/integral/boolean."""
    types = {f.name: keytext.type_name(f.dataType) for f in events.schema.fields}
    bad = [f"{c} {types.get(c)}" for c in shape.record_keys if types.get(c) not in keytext.PLAIN + keytext.TYPED]
    bad += [f"{c} {types.get(c)}" for c in shape.partition_fields if types.get(c) not in keytext.PLAIN]
    return f"key or partition column(s) of a type it does not write: {', '.join(bad)}" if bad else ""


def record_key_column(shape: KeyShape, prefix: str = "", types: dict[str, Any] | None = None,
                      zones: tuple[str, str] = ("UTC", "UTC")):
    """The record key Hudi's key generator makes (ComplexKeyGenerator: `f1:v1,f2:v2`); `types`: the key
    columns' Spark types (keytext.py), when any is not a string/integral/boolean."""
    from pyspark.sql import functions as F

    def as_text(c):
        dtype = (types or {}).get(c)
        return _as_text(prefix + c) if dtype is None else keytext.text(F.col(prefix + c), dtype, zones)

    if not shape.complex_key:
        return as_text(shape.record_keys[0])
    parts = []
    for k in shape.record_keys:
        v = as_text(k)
        v = F.when(v.isNull(), F.lit("__null__")).when(v == "", F.lit("__empty__")).otherwise(v)
        parts.append(F.concat(F.lit(f"{k}:"), v))
    return F.concat_ws(",", *parts)


def partition_path_column(shape: KeyShape, prefix: str = ""):
    """The partition path Hudi's key generator makes: values joined by '/', a null or empty value as
    Hive's default partition, `field=value` when hive-style."""
    from pyspark.sql import functions as F

    if not shape.partition_fields:
        return F.lit("")
    parts = []
    for p in shape.partition_fields:
        v = _as_text(prefix + p)
        v = F.when(v.isNull() | (v == ""), F.lit(DEFAULT_PARTITION)).otherwise(v)
        parts.append(F.concat(F.lit(f"{p}="), v) if shape.hive_style else v)
    return F.concat_ws("/", *parts)


@dataclass
class Located:
    """The round as prepped records, and what the lookup found."""

    df: Any  # the DataFrame to write: META columns first, then the event's columns
    unchanged: int  # events no newer than the stored row (dropped)
    moves: int  # keys whose partition changed (a delete in the old file group + an insert)
    ignored_deletes: int  # deletes of keys the table does not hold, or older than the stored row
    cached: Any  # the cached lookup: unpersist it after the write
    moved_out: Any = None  # the part of `df` that deletes moved keys where they were
    rest: Any = None  # `df` without them
    inserted: Any = None  # record key and file name of the inserts sent into a file group's log (log_inserts.py)
    key_columns: tuple[str, ...] = ()  # the record key and partition fields
    kept: int = 0  # the events written (a move counted once): what the round writes, known without a count pass
    key_rows: Any = None  # the delta commit's key file, when known without a Spark job (logkeys.KeyRows)


def locate(spark, events, base_path: str, shape: KeyShape, ordering: list[str], log=None,
           mor: bool = False, insert_targets: dict[str, tuple[str, str]] | None = None,
           driver: bool = True, round_keys: list[tuple] | None = None) -> Located | None:
    """The round's events tagged with the stored locations, or None when this round must go through
    Hudi's index (a column type or stored key this module does not reproduce). `events` holds one
    event per key and the `_hoodie_is_deleted` column. `mor`: the stored rows may be read as base files
    plus the keys hudi-cdc's own delta commits logged (logkeys.py). `insert_targets`: partition path ->
    (instant, base file name) of the file group a new key in that partition goes to (log_inserts.py);
    a new key in another partition gets no location (Hudi opens a file group). `driver`: a small round's
    stored rows may be read in the driver (driver_lookup.py); `round_keys`, when known, the events' record key
    tuples (a superset does no harm: stored rows of other keys join no event)."""
    from pyspark.sql import functions as F

    cols = list(shape.record_keys) + list(shape.partition_fields)
    if "_hoodie_is_deleted" not in events.columns or not ordering or unlocatable(events, shape):
        return None
    types = {f.name: f.dataType for f in events.schema.fields if f.name in shape.record_keys}
    unwritable = [u for u in (keytext.unwritable(F.col(c), types[c]) for c in shape.record_keys) if u is not None]
    zones = keytext.zones(spark) if any(keytext.type_name(t) == "TimestampType" for t in types.values()) else None
    record_key = record_key_column(shape, types=types, zones=zones or ("UTC", "UTC"))
    keys = list(shape.record_keys)
    stored_cols = list(dict.fromkeys(keys + list(shape.partition_fields) + ordering))
    stored, on = stored_for_round(spark, events, base_path, keys, stored_cols, meta=META, log=log,
                                  mor_ordering=ordering if mor else None, driver=driver, known_keys=round_keys)
    joined = events.join(stored, on, "left")
    found = F.col("__s_hoodie_record_key").isNotNull()
    is_del = F.coalesce(F.col("_hoodie_is_deleted"), F.lit(False))
    stored_o = [f"__s_{o}" for o in ordering]
    at_least = ordering_at_least(stored_o, ordering)  # stored ordering >= event ordering
    newer = ordering_at_least(stored_o, ordering, strict=True)  # stored ordering > event ordering
    new_pp = partition_path_column(shape)
    no = F.lit(False)
    unchanged = found & ~is_del & F.coalesce(at_least, no)
    ignored_delete = is_del & (~found | F.coalesce(newer, no))
    move = found & ~is_del & ~F.coalesce(at_least, no) & (new_pp != F.col("__s_hoodie_partition_path"))
    key_differs = found & (record_key != F.col("__s_hoodie_record_key"))
    stored_pp_differs = found & (partition_path_column(shape, "__s_") != F.col("__s_hoodie_partition_path"))
    tagged = (joined.withColumn("__unchanged", F.coalesce(unchanged, no))
              .withColumn("__ignored_delete", F.coalesce(ignored_delete, no))
              .withColumn("__move", F.coalesce(move, no)).cache())
    counts = tagged.agg(
        F.count(F.lit(1)).alias("events"),
        F.sum(F.col("__unchanged").cast("int")).alias("unchanged"),
        F.sum(F.col("__ignored_delete").cast("int")).alias("ignored_deletes"),
        F.sum(F.col("__move").cast("int")).alias("moves"),
        F.sum(key_differs.cast("int")).alias("key_differs"),
        F.sum(stored_pp_differs.cast("int")).alias("pp_differs"),
        F.sum(_any(unwritable).cast("int")).alias("unwritable")).first()
    if (counts["key_differs"] or 0) or (counts["pp_differs"] or 0) or (counts["unwritable"] or 0):
        if log is not None:
            log(f"{base_path}: {counts['key_differs'] or 0} stored record key(s) and {counts['pp_differs'] or 0} "
                f"partition path(s) differ from the ones computed for them, {counts['unwritable'] or 0} key(s) "
                "with a value whose text hudi-cdc does not write (keytext.py): Hudi's index locates the round")
        tagged.unpersist()
        return None
    kept = tagged.where(~F.col("__unchanged") & ~F.col("__ignored_delete"))
    data_cols = [c for c in events.columns if c not in META]
    stored_meta = [F.col(f"__s{m}").alias(m) for m in META]
    null = F.lit(None).cast("string")
    new_meta = [null.alias("_hoodie_commit_time"), null.alias("_hoodie_commit_seqno"),
                F.coalesce(F.col("__s_hoodie_record_key"), record_key).alias("_hoodie_record_key"),
                new_pp.alias("_hoodie_partition_path"), null.alias("_hoodie_file_name")]
    # in place: updates and deletes of stored keys (a delete at the key's own partition and file group)
    in_place = kept.where(F.col("__s_hoodie_record_key").isNotNull() & ~F.col("__move")) \
        .select(*stored_meta, *[F.col(c) for c in data_cols])
    # partition moves: the stored row deleted where it is (with the event's ordering value) ...
    moved_out = kept.where(F.col("__move")).select(
        *stored_meta, *[F.lit(True).alias(c) if c == "_hoodie_is_deleted" else F.col(c) for c in data_cols])
    # ... and inserted where it goes; new keys likewise (no location: Hudi opens or fills a file group)
    inserts = kept.where(F.col("__s_hoodie_record_key").isNull() | F.col("__move")) \
        .select(*new_meta, *[F.col(c) for c in data_cols])
    inserted = None
    if insert_targets:
        inserts, inserted = _into_targets(spark, inserts, insert_targets)
    rest = in_place.unionByName(inserts)
    unchanged_n, ignored_n = int(counts["unchanged"] or 0), int(counts["ignored_deletes"] or 0)
    return Located(rest.unionByName(moved_out), unchanged_n, int(counts["moves"] or 0), ignored_n, tagged,
                   moved_out, rest, inserted, tuple(cols), int(counts["events"] or 0) - unchanged_n - ignored_n)


def _any(conditions: list):
    """One condition, true where any of `conditions` is (False for none; a NULL counts as false)."""
    from pyspark.sql import functions as F

    out = F.lit(False)
    for c in conditions:
        out = out | F.coalesce(c, F.lit(False))
    return out


def _into_targets(spark, inserts, insert_targets: dict[str, tuple[str, str]]):
    """The inserts with the location of their partition's target file group, where it has one; and the
    record key and file name of those (what logkeys.py keeps as inserts)."""
    from pyspark.sql import functions as F

    rows = [(pp, instant, name) for pp, (instant, name) in sorted(insert_targets.items())]
    t = local_rows.frame(spark, rows, ["__t_pp", "__t_instant", "__t_file"], ["string"] * 3)  # no Python worker
    cols = inserts.columns
    joined = inserts.join(F.broadcast(t), F.col("_hoodie_partition_path") == F.col("__t_pp"), "left")
    placed = joined.select(*[F.col("__t_instant").alias(c) if c == "_hoodie_commit_time" else
                             F.col("__t_file").alias(c) if c == "_hoodie_file_name" else F.col(c) for c in cols])
    inserted = placed.where(F.col("_hoodie_file_name").isNotNull()).select("_hoodie_record_key", "_hoodie_file_name")
    return placed, inserted
