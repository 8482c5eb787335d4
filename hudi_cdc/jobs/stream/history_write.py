"""A round's history table write (`history: scd2`, docs/history.md): the stored versions of the round's
keys read, recomputed with the round's events (history.py), the difference upserted into
`<table>_history` beside the current-state table.

Written BEFORE the current-state commit, with the same checkpoint and cut in its commit metadata: the
current-state table's checkpoint is what the next round starts from, so a crash (kill -9) between the
two commits reads the same files again, and the recomputation finds every version already there (an
empty difference: no second history commit). The other order would lose the versions of a round
whose current-state commit made it and whose history commit did not.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from hudi_cdc.common.checkpoints import HISTORY_OPEN_KEY, newest_value
from hudi_cdc.jobs.stream import history as h
from hudi_cdc.jobs.stream import keyjoin, keytext, log_inserts
from hudi_cdc.jobs.stream.table import SOURCE_TS_FIELD, commit_metas_newest_first, has_completed_commit

ENABLED_PROP = "hoodie.streamer.hudi_cdc.history"
PATH_PROP = "hoodie.streamer.hudi_cdc.history.path"
TABLE_PROP = "hoodie.streamer.hudi_cdc.history.table"
# the current-state round's options that do not apply to the history table's commit
_NOT_HERE = ("hoodie.datasource.write.insert.drop.duplicates", "hoodie.datasource.write.hive_style_partitioning",
             "hoodie.datasource.hive_sync.partition_fields", "hoodie.simple.index.update.partition.path",
             "hoodie.table.ordering.fields", "hoodie.datasource.write.precombine.field", log_inserts.INSERTS_KEY)


@dataclass
class HistoryWrite:
    base_path: str
    versions: int = 0  # versions written (new, or with a new end)
    removed: int = 0  # versions a late event made redundant
    commit: bool = False
    # open versions after the commit (HISTORY_OPEN_KEY: the previous commit's count plus what it opened less what it
    # ended or removed); None: not known (a history table written before the count existed)
    open_versions: int | None = None


def enabled(props: dict[str, str]) -> bool:
    return (props.get(ENABLED_PROP) or "").strip() == "scd2" and bool(props.get(PATH_PROP))


def history_options(round_opts: dict[str, str], props: dict[str, str], keys: list[str], new_table: bool
                    ) -> dict[str, str]:
    """The history table's writer options: the round's (checkpoint, cut, table version, parallelism,
    Hive sync database) with its own name, key (table key + version start), no partitions, and the
    newest write of a version winning (a version's end is rewritten in place)."""
    opts = {k: v for k, v in round_opts.items() if k not in _NOT_HERE}
    table = props.get(TABLE_PROP) or "history"
    opts.update({
        "hoodie.table.name": table,
        "hoodie.datasource.write.operation": "bulk_insert" if new_table else "upsert",
        "hoodie.datasource.write.recordkey.field": ",".join([*keys, h.FROM_LSN]),
        "hoodie.datasource.write.partitionpath.field": "",
        "hoodie.datasource.write.keygenerator.class": keytext.NONPARTITIONED,
        "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING",
        "hoodie.index.type": "SIMPLE",
        # mostly inserts: new versions fill the small base files rather than open file groups per round
        "hoodie.parquet.small.file.limit": "134217728",
    })
    if opts.get("hoodie.compact.schedule.inline") == "true":  # a compaction beside the rounds: not here
        opts["hoodie.compact.inline"], opts["hoodie.compact.schedule.inline"] = "true", "false"
    if "hoodie.datasource.hive_sync.table" in opts:
        opts["hoodie.datasource.hive_sync.table"] = table
        opts["hoodie.datasource.hive_sync.partition_extractor_class"] = "org.apache.hudi.hive.NonPartitionedExtractor"
    return opts


def _stored(spark, path: str):
    """The history table's versions (Hudi's snapshot read, meta columns dropped)."""
    df = spark.read.format("hudi").load(path)
    return df.drop(*[c for c in df.columns if c.startswith("_hoodie")])


def plan(spark, events, keys: list[str], lsn_field: str, path: str, truncated: list[tuple[int, object]]):
    """(rows to write with `_hoodie_is_deleted`, whether the history table is new)."""
    from pyspark.sql import functions as F

    new_table = not has_completed_commit(path)
    ev = h.round_events(events, keys, lsn_field, SOURCE_TS_FIELD)
    round_keys = ev.select(*keys).distinct()
    if new_table:
        stored = None
        keys_df = round_keys
    else:
        hist = _stored(spark, path)
        keys_df = round_keys
        if truncated:
            open_then = None
            for lsn, *_ in truncated:
                cond = h.open_at(hist, lsn)
                open_then = cond if open_then is None else (open_then | cond)
            keys_df = round_keys.unionByName(hist.where(open_then).select(*keys)).distinct()
        stored = keyjoin.join(hist, keys_df, keys, "left_semi").cache()
        ev = ev.unionByName(h.stored_events(stored, keys), allowMissingColumns=True)
    if truncated:
        ev = ev.unionByName(h.truncate_events(keys_df, keys, truncated), allowMissingColumns=True)
    versions = h.versions(ev, keys)
    if stored is None:
        return versions.withColumn(h.DELETED, F.lit(False)), True, None
    return h.changes(versions, stored, keys), False, stored


def truncations(events, lsn_field: str, seen: bool, floor: list | None) -> list[tuple]:
    """(LSN, source time, last commit LSN before it) of the round's TRUNCATEs and of the table's truncate
    floor (an earlier round's: a late event from before it is a version that ended there)."""
    truncated = h.truncates(events, lsn_field, SOURCE_TS_FIELD) if seen else []
    if floor is not None and all(t[0] != int(floor[0]) for t in truncated):
        truncated = sorted([*truncated, (int(floor[0]), None, None)], key=lambda x: x[0])
    return truncated


def last_open_versions(path: str) -> int | None:
    """The open versions after the history table's newest commit that counted them (None: none did)."""
    value = newest_value(commit_metas_newest_first(path, "the history table's open versions"), HISTORY_OPEN_KEY)
    return int(value) if value is not None else None


def write_round(spark, events, keys: list[str], lsn_field: str, props: dict[str, str], round_opts: dict[str, str],
                truncate_seen: bool, floor: list | None, log) -> dict:
    """The round's history commit (none when nothing changed: a redelivery, or a rerun after a crash);
    what it wrote, for the round's result."""
    from pyspark.sql import functions as F

    truncated = truncations(events, lsn_field, truncate_seen, floor)
    path = props[PATH_PROP]
    out = HistoryWrite(path)
    rows, new_table, stored = plan(spark, events, keys, lsn_field, path, truncated)
    rows = rows.cache()
    try:
        was_open = F.col(h.WAS_OPEN).cast("int") if h.WAS_OPEN in rows.columns else F.lit(0)
        counts = rows.agg(F.count(F.lit(1)).alias("n"), F.sum(F.when(F.col(h.DELETED), 1).otherwise(0)).alias("gone"),
                          F.sum(F.when(~F.col(h.DELETED) & F.col(h.CURRENT), 1).otherwise(0)).alias("opened"),
                          F.sum(F.coalesce(was_open, F.lit(0))).alias("closed"),
                          *([keytext.empty_parts(keys)] if new_table else [])).first()
        out.removed = int(counts["gone"] or 0)
        out.versions = int(counts["n"]) - out.removed
        if counts["n"]:
            before = 0 if new_table else last_open_versions(path)
            if before is not None:
                out.open_versions = before + int(counts["opened"] or 0) - int(counts["closed"] or 0)
            opts = history_options(round_opts, props, keys, new_table)
            if new_table:  # a binary key or an empty / NULL part as the upserts write it (keytext.py)
                opts.update(keytext.row_writer_options(rows.schema, keys, counts[keytext.EMPTY_PARTS]))
            if out.open_versions is not None:
                opts[HISTORY_OPEN_KEY] = str(out.open_versions)
            rows.drop(h.WAS_OPEN).write.format("hudi").options(**opts).mode("append").save(path)
            out.commit = True
    finally:
        rows.unpersist()
        if stored is not None:
            stored.unpersist()
    log(f"{props.get(TABLE_PROP)}: {out.versions} version(s) written, {out.removed} removed"
        + ("" if out.commit else " (nothing new: no commit)"))
    return asdict(out)
