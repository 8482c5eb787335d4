"""A Merge-on-Read round's key lookup without merging the table's log files.

Locating a round's keys (located.py) needs each stored key's file group, partition path and ordering
value. Hudi's snapshot read of a MoR table merges every file group's log files into its base file
for that: at 10M rows, 11 s of a round once the file groups carry logs, against 1.6-2.0 s for the
read-optimized read of the base files alone (benchmarks/results/2026-11-24-idle.md).

What the base files do not hold is what the delta commits since their compaction wrote into logs,
and hudi-cdc wrote those itself: every located record it sends to a stored file group (an update or
delete in place, the delete half of a partition move). So after each such delta commit it keeps
those records' keys, file group, ordering values and delete flag in a small Parquet file beside the
table (.hoodie/.aux/hudi-cdc-logkeys/<delta commit>.parquet), and a later round reads the base files
and lays those records over them, newest ordering value first, as Hudi's event-time merge does.

Used only where that is exactly the snapshot read: every log file of the latest file slices (hudi-rs
lists them) written by a completed delta commit that has such a file; every file group with a base
file no unfinished write made; no clustering or log compaction pending (a pending compaction is
fine: hudi-rs lists the base files before it with every log since); no log file holding inserts (checked in
the delta commit's metadata before the file is written). Anything else, e.g. a delta commit that
HoodieStreamer, Spark SQL or a crash between the commit and the file wrote: that round takes the
snapshot read, and so does every round until a compaction has folded those logs into base files.
Files of delta commits whose logs no latest file slice holds any more are removed."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from hudi_cdc.common import s3, storage
from hudi_cdc.common.causes import first_line
from hudi_cdc.common.instants import COMPLETED, table_instants
from hudi_cdc.common.properties import local_path
from hudi_cdc.jobs.stream import local_rows
from hudi_cdc.jobs.stream.ordering import at_least as ordering_at_least
from hudi_cdc.jobs.stream.table import META, base_file_instant, hudi_timeline, is_initialized

LOGKEYS_DIR = (".hoodie", ".aux", "hudi-cdc-logkeys")
# hoodie.streamer.hudi_cdc.mor.lookup: "log-keys" (default, this module) or "snapshot" (Hudi's merged read)
LOOKUP_PROP = "hoodie.streamer.hudi_cdc.mor.lookup"
FILE_ID, INSTANT = "__logkeys_file_id", "__logkeys_instant"
# a record a located insert put into the file group's log (log_inserts.py): its key is in no base file
INSERTED = "__logkeys_inserted"
_LOG_NAME = re.compile(r"^\.(?P<fid>.+)_(?P<instant>\d{14,})\.log\.\d+")
_SUCCESS = "_SUCCESS"


def enabled(props: dict[str, str]) -> bool:
    return (props.get(LOOKUP_PROP) or "log-keys").strip().lower() != "snapshot"


def _dir(base_path: str) -> str:
    """Where the key files are, as Spark names it (the table's own scheme: file://, s3://)."""
    return "/".join([base_path.rstrip("/"), *LOGKEYS_DIR])


def _file(base_path: str, instant: str) -> str:
    return f"{_dir(base_path)}/{instant}.parquet"


class _Fs:
    """Hadoop's file system of the table, as Spark reads and writes it (a key file is a folder)."""

    def __init__(self, spark, uri: str):
        jvm = spark.sparkContext._jvm
        self._path = jvm.org.apache.hadoop.fs.Path
        self._fs = self._path(uri).getFileSystem(spark.sparkContext._jsc.hadoopConfiguration())

    def exists(self, uri: str) -> bool:
        return bool(self._fs.exists(self._path(uri)))

    def names(self, uri: str) -> list[str]:
        if not self.exists(uri):
            return []
        return [st.getPath().getName() for st in self._fs.listStatus(self._path(uri))]

    def delete(self, uri: str) -> None:
        self._fs.delete(self._path(uri), True)


def file_id_column(file_name_col):
    """A file group's id from a data file's name (`<file id>_<write token>_<instant>.parquet`), as Hudi's
    FSUtils.getFileId takes it."""
    from pyspark.sql import functions as F

    return F.substring_index(file_name_col, "_", 1)


def _timeline(base_path: str) -> tuple[set[str], set[str], set[str], str]:
    """(completed delta commits, every delta commit the timeline holds in any state, every instant not
    completed yet, ""), or why not when a clustering, log compaction or replace is pending (they move records
    between file groups). A pending compaction is no reason: until it completes, the latest file slices
    hudi-rs lists are the base files before it with every log since, the delta commits written while it
    runs included (compaction.py runs it beside the rounds). Requested times."""
    instants = table_instants(local_path(base_path))
    completed = {i.requested_time for i in instants if i.state == COMPLETED}
    for inst in instants:
        if inst.requested_time not in completed and not inst.is_compaction and (
                inst.planned_action or inst.action == "replacecommit"):
            return set(), set(), set(), f"a pending {inst.planned_action or inst.action} ({inst.requested_time})"
    deltas = {i.requested_time for i in instants if i.action == "deltacommit"}
    unfinished = {i.requested_time for i in instants} - completed  # archived instants all completed
    return deltas & completed, deltas, unfinished, ""


def log_pairs(slices, done: set[str], deltas: set[str], unfinished: frozenset[str] | set[str] = frozenset(),
              writers: dict[str, set[str]] | None = None) -> tuple[set[tuple[str, str]] | None, str]:
    """(file group id, delta commit) of each log file in the latest file slices that a completed delta
    commit wrote; a delta commit in flight or failed is skipped (readers skip its logs too). None, and
    why, for a file group without a base file or with one an instant not completed yet (`unfinished`)
    wrote, or a log named by an instant that is no delta commit on the timeline (table version 6 names
    logs by their base instant, and an upgraded table keeps them until a compaction; an archived delta
    commit): what such a log holds is unknown here. ``writers`` (table version 6: a log is named by its
    slice's base instant, and several delta commits may append to one): log file name -> the completed delta
    commits whose write statistics name it; a log none of them wrote (a failed write's) is skipped."""
    pairs: set[tuple[str, str]] = set()
    for s in slices:
        if not s.base_file_name:
            return None, f"file group {s.file_id} has no base file"
        made_by = base_file_instant(s.base_file_name)
        if made_by in unfinished:
            return None, f"base file {s.base_file_name} of an unfinished write ({made_by})"
        for name in s.log_file_names:
            m = _LOG_NAME.match(name)
            if m is None:
                return None, f"a log file name this lookup does not read: {name}"
            if writers is not None:
                pairs.update((s.file_id, d) for d in writers.get(name, ()) if d in done)
                continue
            instant = m.group("instant")
            if instant in done:
                pairs.add((s.file_id, instant))
            elif instant not in deltas:
                return None, f"log file {name} is named by {instant}, no delta commit on the active timeline"
    return pairs, ""


def _log_writers(base_path: str, done: set[str]) -> dict[str, set[str]]:
    """Log file name -> the completed delta commits that wrote to it, from their write statistics (table
    version 6 names a log by its file slice's base instant, not by the delta commit that wrote it)."""
    tl = hudi_timeline(base_path, "the delta commits' write statistics")
    out: dict[str, set[str]] = {}
    for inst in tl.get_completed_deltacommits():
        if inst.timestamp in done:
            for st in _log_stats(tl, inst):
                out.setdefault(st["path"].rsplit("/", 1)[-1], set()).add(inst.timestamp)
    return out


def _log_stats(tl, inst) -> list[dict]:
    """The write statistics of a completed delta commit's log files (its commit metadata)."""
    meta = json.loads(tl.get_instant_metadata_in_json(inst) or "{}")
    return [st for stats in (meta.get("partitionToWriteStats") or {}).values() for st in (stats or [])
            if ".log." in (st.get("path") or "")]


def current_logs(spark, base_path: str, table=None) -> tuple[set[tuple[str, str]] | None, str]:
    """(file group id, delta commit) of every completed delta commit's log file in the latest file
    slices, when each of those delta commits has its key file; else (None, why not). `table`: the
    hudi-rs table to list them with (a reader of the same view), else one is built."""
    done, deltas, unfinished, why = _timeline(base_path)
    if why:
        return None, why
    table = table if table is not None else s3.hudi_table_builder(base_path).build()
    writers = None
    if int(dict(table.hudi_options()).get("hoodie.table.version", "9") or "9") < 8:
        writers = _log_writers(base_path, done)
    pairs, why = log_pairs(table.get_file_slices(), done, deltas, unfinished, writers)
    if pairs is None:
        return None, why
    fs = _Fs(spark, base_path)
    missing = sorted({d for _, d in pairs if not fs.exists(f"{_file(base_path, d)}/{_SUCCESS}")})
    if missing:
        return None, f"delta commit {missing[0]} has no key file (written by another writer, or before it)"
    return pairs, ""


def stored_view(spark, base_path: str, columns: list[str], ordering: list[str], log=None):
    """The base files' rows (read-optimized) with what later delta commits logged laid over them: the
    table as Hudi's snapshot read gives `columns` (which hold `_hoodie_file_name`, `_hoodie_record_key`
    and the ordering fields); None when this module cannot stand in for that read."""
    from pyspark.sql import functions as F

    pairs, why = current_logs(spark, base_path)
    if pairs is None:
        if log is not None:
            log(f"{base_path}: MoR lookup through the merged snapshot read ({why})")
        return None
    remove_obsolete(spark, base_path, {d for _, d in pairs})
    base = (spark.read.format("hudi").option("hoodie.datasource.query.type", "read_optimized")
            .load(base_path).select(*columns))
    if not pairs:
        return base
    instants = sorted({d for _, d in pairs})
    # key files before log_inserts.py hold no INSERTED flag nor row columns: null there
    logged = spark.read.option("mergeSchema", "true").parquet(*[_file(base_path, d) for d in instants])
    current = local_rows.frame(spark, sorted(pairs), [FILE_ID, INSTANT], ["string", "string"])  # no Python worker
    logged = logged.join(F.broadcast(current), [FILE_ID, INSTANT], "left_semi")
    if INSERTED not in logged.columns:
        logged = logged.withColumn(INSERTED, F.lit(False))
    carried = [c for c in columns if c in logged.columns and c not in ordering and c != "_hoodie_record_key"]
    # the newest version per key and file group: highest ordering value, then the later delta commit;
    # and whether the first one put the key there as an insert (then no base file holds it)
    newest = logged.groupBy("_hoodie_record_key", FILE_ID).agg(
        F.max(F.struct(*[F.col(o) for o in ordering], F.col(INSTANT), F.col("_hoodie_is_deleted"),
                       *[F.col(c) for c in carried])).alias("__n"),
        F.min(F.struct(F.col(INSTANT), F.coalesce(F.col(INSERTED), F.lit(False)).alias("i"))).alias("__first"))
    newest = newest.select(F.col("_hoodie_record_key").alias("__l_key"), F.col(FILE_ID).alias("__l_fid"),
                           *[F.col(f"__n.{o}").alias(f"__l_{o}") for o in ordering],
                           *[F.col(f"__n.{c}").alias(f"__l_{c}") for c in carried],
                           F.col("__n._hoodie_is_deleted").alias("__l_deleted"),
                           F.col("__first.i").alias("__l_inserted"))
    joined = base.withColumn(FILE_ID, file_id_column(F.col("_hoodie_file_name"))).join(
        F.broadcast(newest), (F.col("_hoodie_record_key") == F.col("__l_key")) & (F.col(FILE_ID) == F.col("__l_fid")),
        "left")
    applies = F.col("__l_key").isNotNull() & F.coalesce(
        ordering_at_least([f"__l_{o}" for o in ordering], ordering), F.lit(False))
    out = joined.where(~(applies & F.coalesce(F.col("__l_deleted"), F.lit(False))))
    out = out.select(*[F.when(applies, F.col(f"__l_{c}")).otherwise(F.col(c)).alias(c) if c in ordering
                       else F.col(c) for c in columns])
    # keys only logs hold (inserts log_inserts.py sent into a file group), unless deleted since
    only_logged = newest.where(F.col("__l_inserted") & ~F.coalesce(F.col("__l_deleted"), F.lit(False)))
    missing = [c for c in columns if c != "_hoodie_record_key" and f"__l_{c}" not in only_logged.columns]
    if missing:
        if only_logged.limit(1).count():
            if log is not None:
                log(f"{base_path}: MoR lookup through the merged snapshot read (key files without {missing[0]})")
            return None
        return out
    return out.unionByName(only_logged.select(
        *[F.col("__l_key" if c == "_hoodie_record_key" else f"__l_{c}").alias(c) for c in columns]))


def remove_obsolete(spark, base_path: str, keep: set[str]) -> None:
    """Key files of delta commits no latest file slice has a log of (compacted since), and unfinished
    ones (a crash while one was written): never read again."""
    fs = _Fs(spark, base_path)
    for name in fs.names(_dir(base_path)):
        instant = name[:-len(".parquet")] if name.endswith(".parquet") else ""
        if instant and instant not in keep:
            fs.delete(_file(base_path, instant))


def deltacommits_before(base_path: str) -> set[str]:
    """The completed delta commits before a write (the one it adds is the difference)."""
    return _timeline(base_path)[0] if is_initialized(base_path) else set()


@dataclass
class KeyRows:
    """A delta commit's key file known without a Spark job (driver_round.py): its rows as dicts of the record key,
    FILE_ID, the ordering fields, `_hoodie_is_deleted`, INSERTED, Hudi's other meta columns and the key columns
    (INSTANT is added when written), and each non-meta column's Spark type (its class name)."""

    rows: list[dict]
    types: dict[str, str]


_ARROW = {"StringType": "string", "IntegerType": "int32", "LongType": "int64", "ShortType": "int16",
          "ByteType": "int8", "BooleanType": "bool"}


def record(spark, base_path: str, written, ordering: list[str], before: set[str], log=print, inserted=None,
           key_columns: tuple[str, ...] | list[str] = (), key_rows: KeyRows | None = None) -> None:
    """After a delta commit: keep the located records it wrote (`written`: prepped records, those with a
    `_hoodie_file_name` went to a stored file group) as its key file, with their meta and `key_columns`
    (record key and partition fields) and whether each was an insert (`inserted`: record key and file name
    of those, log_inserts.py). None when the commit cannot be told apart or Hudi put inserts into log
    files, or the file cannot be written (logged): later rounds then take the snapshot read until a
    compaction, which changes their speed, not their result. `key_rows`: the file's rows, written by pyarrow."""
    try:
        why = _record(spark, base_path, written, ordering, before, inserted, list(key_columns), key_rows)
    except Exception as exc:  # noqa: BLE001 - a missing key file only sends later lookups to the snapshot read
        why = first_line(exc)
    if why:
        log(f"{base_path}: no key file for this delta commit ({why}): MoR lookups read the merged snapshot "
            "until the next compaction")


def _record(spark, base_path: str, written, ordering: list[str], before: set[str], inserted=None,
            key_columns: list[str] | None = None, key_rows: KeyRows | None = None) -> str:
    from pyspark.sql import functions as F

    after, _, _, why = _timeline(base_path)
    new = sorted(after - before)
    if why or len(new) != 1:
        return why or f"{len(new)} new delta commits"
    instant = new[0]
    if _logs_hold_inserts(base_path, instant):
        return f"delta commit {instant} put inserts into log files"
    if key_rows is not None:
        _write_rows(base_path, instant, key_rows, ordering, key_columns or [])
        return ""
    deleted = F.col("_hoodie_is_deleted") if "_hoodie_is_deleted" in written.columns else F.lit(False)
    rows = written.where(F.col("_hoodie_file_name").isNotNull())
    if inserted is not None:
        flags = inserted.select("_hoodie_record_key", "_hoodie_file_name").withColumn(INSERTED, F.lit(True))
        rows = rows.join(F.broadcast(flags), ["_hoodie_record_key", "_hoodie_file_name"], "left")
    else:
        rows = rows.withColumn(INSERTED, F.lit(False))
    extra = [c for c in dict.fromkeys([*META, *(key_columns or [])])
             if c in rows.columns and c not in ordering and c != "_hoodie_record_key"]
    out = rows.select(
        F.col("_hoodie_record_key"), file_id_column(F.col("_hoodie_file_name")).alias(FILE_ID),
        *[F.col(o) for o in ordering], F.coalesce(deleted, F.lit(False)).alias("_hoodie_is_deleted"),
        F.lit(instant).alias(INSTANT), F.coalesce(F.col(INSERTED), F.lit(False)).alias(INSERTED),
        *[F.col(c) for c in extra])
    out.coalesce(1).write.mode("overwrite").parquet(_file(base_path, instant))
    return ""


def _write_rows(base_path: str, instant: str, key_rows: KeyRows, ordering: list[str], key_columns: list[str]) -> None:
    """The key file of `key_rows` as Spark writes it (the same columns and Parquet types, a folder with one part
    file, then _SUCCESS), by pyarrow."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    extra = [c for c in dict.fromkeys([*META, *key_columns]) if c not in ordering and c != "_hoodie_record_key"]
    names = ["_hoodie_record_key", FILE_ID, *ordering, "_hoodie_is_deleted", INSTANT, INSERTED, *extra]
    flags = ("_hoodie_is_deleted", INSERTED)
    kinds = {n: "bool" if n in flags else _ARROW.get(key_rows.types.get(n, "StringType")) for n in names}
    rows = [{**r, INSTANT: instant} for r in key_rows.rows]
    table = pa.table({n: pa.array([r.get(n) for r in rows], type=kinds[n]) for n in names})
    out = pa.BufferOutputStream()
    pq.write_table(table, out, compression="snappy")
    folder = _file(base_path, instant)
    storage.write_bytes(storage.join(folder, "part-00000-hudi-cdc-driver.snappy.parquet"), out.getvalue().to_pybytes())
    storage.write_bytes(storage.join(folder, _SUCCESS), b"")


def _logs_hold_inserts(base_path: str, instant: str) -> bool:
    tl = hudi_timeline(base_path, "the delta commit's write statistics")
    inst = next(i for i in tl.get_completed_deltacommits() if i.timestamp == instant)
    return any(int(st.get("numInserts") or 0) > 0 for st in _log_stats(tl, inst))
