"""Where a Merge-on-Read round's new keys go: into the log of a file group the partition already has.

Hudi gives an insert a file group of its own unless its index can find keys in log files
(`canIndexLogFiles`): with the global simple index hudi-cdc renders, and `hoodie.parquet.small.file.limit=0`
(a MoR table's base files are never rewritten for inserts), every round that inserts keys opened one more
base file in each partition it touched. A continuous stream did that every few seconds: a partition grew
one small file group per round (13 per partition after a 6-minute benchmark), which every lookup, listing,
compaction plan and reader pays for, and which no compaction merges.

hudi-cdc locates keys itself (located.py), so it gives each new key a location too: the smallest file
group of its partition whose base file plus logs (at Hudi's log-to-Parquet ratio) stays under
`hoodie.parquet.max.file.size`, as Hudi's own small-file assignment picks for indexes that can read logs.
The insert is then written as an update of that file group (a log block); the next compaction folds it
into the base file. A partition without such a file group gets a new one, as before.

What then holds keys only in logs: Hudi's snapshot readers (Spark, Trino, Hive `_rt`, hudi-rs) merge
them; read-optimized readers see them after the compaction, like updates. hudi-cdc's own lookup reads them
from its key files (logkeys.py). Hudi's global simple index reads base files only, so before a round goes
through Hudi's index (a key shape located.py does not take), the table's logs holding such inserts are
compacted first (`compact_before_index`). Such delta commits carry INSERTS_KEY in their metadata.

`hoodie.streamer.hudi_cdc.mor.inserts: new-file-group` turns this off (Hudi's default placement)."""

from __future__ import annotations

import json

from hudi_cdc.common import s3
from hudi_cdc.common.checkpoints import extra_metadata
from hudi_cdc.common.instants import COMPLETED, table_instants
from hudi_cdc.common.properties import local_path
from hudi_cdc.jobs.stream import keyloc
from hudi_cdc.jobs.stream.table import base_file_instant, hudi_timeline

PROP = "hoodie.streamer.hudi_cdc.mor.inserts"  # "log" (default) | "new-file-group"
# commit metadata (prefix "streamer." stripped by the writer's commitmeta prefix) of a delta commit that
# put located inserts into log files
INSERTS_KEY = "streamer.hudi_cdc.log_inserts"
MAX_FILE_SIZE = "hoodie.parquet.max.file.size"
_DEFAULT_MAX_FILE_SIZE = 120 * 1024 * 1024  # Hudi's default
_LOG_TO_PARQUET = "hoodie.logfile.to.parquet.compression.ratio"
_DEFAULT_LOG_TO_PARQUET = 0.35  # Hudi's default
FULL_COMPACTION = "org.apache.hudi.table.action.compact.strategy.UnBoundedCompactionStrategy"


# Hudi's record-level index reads log files (its own placement puts inserts there) and records a key's
# location only when it changes: a key placed here would never enter it. Such tables keep Hudi's placement.
_RECORD_INDEX_PROPS = ("hoodie.metadata.global.record.level.index.enable", "hoodie.metadata.record.index.enable",
                       "hoodie.metadata.record.level.index.enable")


def enabled(props: dict[str, str], table_type: str) -> bool:
    mode = (props.get(PROP) or "log").strip().lower()
    rli = any((props.get(k) or "").strip().lower() == "true" for k in _RECORD_INDEX_PROPS)
    return table_type == "MERGE_ON_READ" and mode != "new-file-group" and not rli


def _number(props: dict[str, str], key: str, default: float) -> float:
    try:
        return float(props.get(key) or default)
    except ValueError:
        return default


def targets(base_path: str, props: dict[str, str]) -> dict[str, tuple[str, str]]:
    """For each partition path: (base instant, base file name) of the file group the round's new keys go
    to, the smallest one under the size limit whose base file a completed write made."""
    if keyloc.has_record_index(keyloc.table_config(base_path)):
        return {}
    limit = _number(props, MAX_FILE_SIZE, _DEFAULT_MAX_FILE_SIZE)
    ratio = _number(props, _LOG_TO_PARQUET, _DEFAULT_LOG_TO_PARQUET)
    done = {i.requested_time for i in table_instants(local_path(base_path)) if i.state == COMPLETED}
    best: dict[str, tuple[float, str, str]] = {}
    for s in s3.hudi_table_builder(base_path).build().get_file_slices():
        if not s.base_file_name:
            continue
        made_by = base_file_instant(s.base_file_name)
        if made_by not in done:
            continue
        size = float(s.base_file_byte_size) + ratio * float(sum(s.log_file_sizes or []))
        if size >= limit:
            continue
        cur = best.get(s.partition_path)
        if cur is None or size < cur[0]:
            best[s.partition_path] = (size, made_by, s.base_file_name)
    return {pp: (instant, name) for pp, (_, instant, name) in best.items()}


def logs_hold_located_inserts(base_path: str) -> bool:
    """Whether the table's latest file slices may hold logs of a delta commit that put located inserts
    into logs (INSERTS_KEY in its metadata): one such delta commit after the oldest base file that has
    logs. (Table version 6 names a log by its base instant, not by the delta commit that wrote it.)"""
    with_logs = [base_file_instant(s.base_file_name) if s.base_file_name else ""
                 for s in s3.hudi_table_builder(base_path).build().get_file_slices() if s.log_file_names]
    if not with_logs:
        return False
    oldest = min(with_logs)
    tl = hudi_timeline(base_path, "the delta commits' metadata")
    for inst in tl.get_completed_deltacommits():
        if inst.timestamp > oldest and \
                extra_metadata(json.loads(tl.get_instant_metadata_in_json(inst) or "{}")).get(INSERTS_KEY):
            return True
    return False


def compaction_sql(base_path: str) -> str:
    """Compact every file group with logs (whatever the table's bounded strategy) in one call."""
    quoted = base_path.replace("'", "\\'")
    return (f"CALL run_compaction(op => 'scheduleAndExecute', path => '{quoted}', "
            f"options => 'hoodie.compaction.strategy={FULL_COMPACTION},hoodie.compact.inline.max.delta.commits=1')")


def compact_before_index(spark, base_path: str, table: str, log=print) -> bool:
    """Before a round that Hudi's index tags: fold logged inserts into base files, where that index
    finds keys. Returns whether a compaction ran."""
    if not logs_hold_located_inserts(base_path):
        return False
    log(f"{table}: compacting before this round goes through Hudi's index (its logs hold new keys that "
        "index does not read)")
    spark.sql(compaction_sql(base_path)).collect()
    if logs_hold_located_inserts(base_path):
        raise RuntimeError(f"{table}: the compaction left log files holding new keys; this round would "
                           "write them twice through Hudi's index")
    return True
