"""One round for one target: pick the files after the checkpoint, read them (with the registry
schema when one is named), keep the latest event per key, drop stale events after deletes,
write with Hudi's datasource and record the new checkpoint and tombstones with the commit."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from hudi_cdc.common import reader_keys
from hudi_cdc.common.causes import root_cause
from hudi_cdc.common.checkpoints import CUT_KEY
from hudi_cdc.jobs.stream import (
    compaction,
    cuts,
    driver_round,
    driver_write,
    evolve,
    keyloc,
    keytext,
    log_inserts,
    logkeys,
    materialize,
    routed,
    small_session,
    spark_changes,
    truncate,
)
from hudi_cdc.jobs.stream import history_write as history
from hudi_cdc.jobs.stream.argv import Target
from hudi_cdc.jobs.stream.changes import Changes
from hudi_cdc.jobs.stream.delete_blocks import delete_block_safe_parts
from hudi_cdc.jobs.stream.errors import JobInputError
from hudi_cdc.jobs.stream.events import raise_if_vanished
from hudi_cdc.jobs.stream.files import list_source_files
from hudi_cdc.jobs.stream.located import PREPPED_OPTION
from hudi_cdc.jobs.stream.props import streamer_prop
from hudi_cdc.jobs.stream.summary import rejected_rows, source_position
from hudi_cdc.jobs.stream.table import (
    CHECKPOINT_KEY,
    has_completed_commit,
    is_initialized,
    latest_instant,
    read_checkpoint,
)
from hudi_cdc.jobs.stream.tombstones import write_tombstones

# Keys consumed by the streamer itself, never passed to the Hudi writer.
_STREAMER_KEYS = ("hoodie.streamer.", "hoodie.deltastreamer.", "include")


@dataclass
class RoundResult:
    table: str
    base_path: str
    operation: str
    files: list[str] = field(default_factory=list)
    records_in: int = 0
    records_written: int = 0
    deletes: int = 0
    checkpoint: str | None = None
    commit: str | None = None
    skipped: bool = False
    stale_ignored: int = 0
    unchanged_ignored: int = 0
    toast_placeholders: dict[str, int] = field(default_factory=dict)  # column -> unchanged TOAST values filled
    toast_unresolved: dict[str, int] = field(default_factory=dict)  # column -> placeholders with no value (null)
    schema_change: str = ""  # what the newest landed schema changes against the table (evolve.py)
    moves: int = 0  # keys whose partition value changed
    ignored_deletes: int = 0  # deletes of keys the table does not hold, or older than its row
    truncated_at: list | None = None  # the ordering values of the TRUNCATE the round applied (truncate.py)
    shard_truncates: dict | None = None  # a routed table's: {shard: its newest TRUNCATE} (shard_truncate.py)
    truncate_seen: list | None = None  # the newest TRUNCATE among the round's events
    history: dict | None = None  # the history table's write (history_write.py)
    rejected: int = 0  # rows with a value their lake type cannot hold (NULL there, kept in __rejects)
    cut: int | None = None  # the transaction cut the round ended on (cuts.py)
    # seconds per phase of the round (Spark is lazy: each phase ends with the action that runs it)
    phases: dict[str, float] = field(default_factory=dict)

    def lap(self, phase: str, since: float) -> float:
        now = time.monotonic()
        self.phases[phase] = round(now - since, 2)
        return now

    def as_dict(self) -> dict:
        return self.__dict__.copy()


def writer_options(props: dict[str, str], t: Target) -> dict[str, str]:
    """The Hudi writer's options: every hoodie.* key the streamer does not consume, plus the target's."""
    opts = {k: v for k, v in props.items() if k.startswith("hoodie.") and not k.startswith(_STREAMER_KEYS)}
    db, _, table = t.target_table.rpartition(".")
    opts.setdefault("hoodie.table.name", table)
    # a timestamp key's text as the bootstrap's row writer makes it, on the upserts' path too (keytext.py)
    opts.setdefault(keytext.CONSISTENT_TIMESTAMP, "true")
    opts["hoodie.datasource.write.table.type"] = t.table_type
    if t.source_ordering_fields:
        opts.setdefault("hoodie.table.ordering.fields", t.source_ordering_fields)
    if t.enable_sync:
        opts["hoodie.datasource.meta.sync.enable"] = "true"
        opts["hoodie.datasource.hive_sync.enable"] = "true"
        if db:
            opts.setdefault("hoodie.datasource.hive_sync.database", db)
        opts.setdefault("hoodie.datasource.hive_sync.table", table)
    if compaction.is_async(t.continuous, t.table_type, props):
        compaction.writer_options(opts)  # scheduled here, executed beside the rounds (compaction.py)
    return opts


def _pick_files(t: Target, root: str, props: dict[str, str], result: RoundResult, log):
    """The round's files: after the table's checkpoint, ending on a transaction cut (cuts.py).
    Returns (the table exists, its checkpoint, the files, the new checkpoint, the cut's metadata)."""
    existing = has_completed_commit(t.target_base_path)
    checkpoint = read_checkpoint(t.target_base_path) if existing else None
    missing_ok = not existing and t.op == "UPSERT"
    route = routed.route_of(props)
    if route is not None:  # several shards' folders, one checkpoint (routed.py)
        files, new_cp, cut_meta = routed.pick(root, route, checkpoint, t.source_limit, missing_ok, t.target_table, log)
    else:
        files, new_cp = list_source_files(root, checkpoint, t.source_limit, missing_ok=missing_ok)
        files, new_cp, cut_meta = cuts.apply(files, new_cp, root, checkpoint, t.target_table, log,  # whole txns
                                             ceiling=t.cut_ceiling)
    result.checkpoint = new_cp
    result.cut = int(cut_meta[CUT_KEY]) if cut_meta.get(CUT_KEY) else None
    if not files:
        result.skipped = True
        log(f"{t.target_table}: no new files under {root} after checkpoint {checkpoint}")
    else:
        result.files = [f[0] for f in files]
    return existing, checkpoint, files, new_cp, cut_meta


def run_round(spark, t: Target, props: dict[str, str], log=print) -> RoundResult:
    root = streamer_prop(props, "source.dfs.root")
    if not root:
        raise JobInputError(f"{t.props}: hoodie.streamer.source.dfs.root is not set")
    result = RoundResult(table=t.target_table, base_path=t.target_base_path, operation=t.op)
    picked = _pick_files(t, root, props, result, log)
    existing, files = picked[0], picked[2]
    if not files:
        return compaction.after_empty_round(spark, t, props, existing, result, log)
    held = materialize.Held(t.op != "BULK_INSERT" and small_session.is_small(files, props))  # materialize.py
    try:
        return _apply(spark, t, props, root, picked, result, held, log)
    finally:
        held.release()


def _apply(spark, t: Target, props: dict[str, str], root: str, picked: tuple, result: RoundResult,
           held: materialize.Held, log) -> RoundResult:
    """The round's picked files (_pick_files) read, applied and committed: in the driver when driver_round.py can
    make the round, else through Spark."""
    files = picked[2]
    spark = small_session.for_round(spark, files, props)  # a few events: one shuffle partition (small_session.py)
    driver = small_session.is_small(files, props) and driver_write.enabled(props)  # driver_write.py
    clock = time.monotonic()
    changes = _in_driver(spark, t, props, picked, result, log)
    if changes is not None:
        clock = result.lap("read and locate", clock)
    else:
        changes, clock = spark_changes.prepare(spark, t, props, root, picked, result, held, log, clock)
    return _commit(spark, t, props, picked, result, changes, clock, log, driver)


def _in_driver(spark, t: Target, props: dict[str, str], picked: tuple, result: RoundResult, log) -> Changes | None:
    """The round's changes made in the driver (driver_round.py), or None: Spark's path makes them. A landed file it
    cannot read is Spark's path's to name (events.py), so an unexpected error only sends the round there."""
    existing, checkpoint, files = picked[0], picked[1], picked[2]
    if driver_round.why_not(t, props, files, existing, checkpoint):
        return None
    try:
        return driver_round.prepare(spark, t, props, files, checkpoint, result, log)
    except JobInputError:
        raise
    except Exception as exc:  # noqa: BLE001 - nothing is written yet; Spark's path reads the round again
        log(f"{t.target_table}: the round reads through Spark ({root_cause(exc)})")
        return None


def _commit(spark, t: Target, props: dict[str, str], picked: tuple, result: RoundResult, c: Changes, clock: float,
            log, driver: bool) -> RoundResult:
    """The round's changes committed, with their checkpoint, side files (tombstones, a TRUNCATE's floor) and the
    history table's versions."""
    files, new_cp, cut_meta = picked[2], picked[3], picked[4]
    bulk = t.op == "BULK_INSERT"
    clock = _count_written(c.df, bulk, c.summary, c.located, result, clock)
    result.rejected = rejected_rows(c.summary, t.target_table, log)
    assert new_cp is not None  # files were picked, so the checkpoint is the newest one's mtime
    opts = _write_options(props, t, c.overwrite, new_cp, c.summary, cut_meta, c.df.schema if bulk else None,
                          c.record_keys)
    if c.located is not None and c.located.inserted is not None:
        opts[log_inserts.INSERTS_KEY] = "true"  # a later round through Hudi's index compacts first
    if c.every_event:  # the history table first: its versions survive a crash before the commit below
        result.history = history.write_round(spark, c.every_event[0], c.record_keys, c.ordering[0], props, opts,
                                             result.truncate_seen is not None, c.floor, log)
        clock = result.lap("history", clock)
    tombstones_first, floor_first = _side_files_first(t, opts, new_cp, c.deleted_keys, c.ordering, result, log)
    log(f"{t.target_table}: {t.op} of {result.records_written} record(s) from {len(files)} file(s) "
        f"into {t.target_base_path} ...")
    try:
        _write(c.df, t, opts, c.located, c.overwrite, result, clock, c.ordering if c.mor_keys else [], log, driver)
    except Exception as exc:
        raise_if_vanished(files)  # Spark reads the files again for the write (the cache may be evicted)
        raise RuntimeError(f"Hudi write to {t.target_table} ({t.target_base_path}) failed: {root_cause(exc)}") from exc
    finally:
        for cached in c.cached:
            cached.unpersist()
        if c.located is not None:
            c.located.cached.unpersist()
    if reader_keys.ensure(spark, t.target_base_path, ",".join(c.ordering)):  # version 6: what older readers need
        log(f"{t.target_table}: the ordering field and payload written to hoodie.properties for older readers")
    if c.deleted_keys and not tombstones_first:
        write_tombstones(t.target_base_path, new_cp, c.deleted_keys)
    if result.truncated_at is not None and not floor_first:
        truncate.write_floor(t.target_base_path, new_cp, c.ordering, result.truncated_at)
    result.commit = latest_instant(t.target_base_path)
    log(f"{t.target_table}: committed {result.commit}, checkpoint {new_cp} "
        f"({', '.join(f'{k} {v:.1f} s' for k, v in result.phases.items())})")
    return result


def _count_written(df, bulk: bool, summary: dict, located, result: RoundResult, clock: float) -> float:
    """The records the round writes: a bootstrap's from its summary, a located round's from the lookup's
    own pass (no count job), else a count pass (a move is two records: the delete and the insert)."""
    if bulk:
        result.records_written = int(summary["n"]) - result.deletes
    elif located is not None:
        result.records_written = located.kept
    else:
        result.records_written = df.count() - result.moves
        clock = result.lap("count", clock)
    return clock


def _write_options(props: dict[str, str], t: Target, overwrite: bool, new_cp: str, summary: dict,
                   cut_meta: dict[str, str], bulk_schema=None, record_keys: list[str] | None = None) -> dict[str, str]:
    """The Hudi writer's options of this round's commit, with its checkpoint and source position; `bulk_schema`: a
    bootstrap's events' schema (the row writer: keytext.row_writer_options)."""
    opts = writer_options(props, t)
    opts["hoodie.datasource.write.operation"] = truncate.OVERWRITE_OPERATION if overwrite else t.op.lower()
    if t.filter_dupes and t.op != "BULK_INSERT":
        # BULK_INSERT goes into a new table and the batch is de-duplicated by key above, which is
        # what --filter-dupes means there (Hudi's row-writer bulk insert refuses drop.duplicates).
        opts["hoodie.datasource.write.insert.drop.duplicates"] = "true"
    opts["hoodie.datasource.write.commitmeta.key.prefix"] = "streamer."
    opts[CHECKPOINT_KEY] = new_cp
    opts.update(source_position(summary))
    opts.update(cut_meta)
    if bulk_schema is not None:  # a binary key, or a composite key's empty part, as the upserts write it (keytext.py)
        opts.update(keytext.row_writer_options(bulk_schema, record_keys or [], summary.get(keytext.EMPTY_PARTS)))
    return opts


def _side_files_first(t: Target, opts: dict[str, str], new_cp: str, deleted_keys: list[dict], ordering: list[str],
                      result: RoundResult, log) -> tuple[bool, bool]:
    """Before the commit: a crash after it must not lose them (tombstones.py). Not into a table Hudi has
    not created yet (a bootstrap whose landed files hold deletes): Hudi refuses a .hoodie folder
    without hoodie.properties, so a new table's tombstones follow its first commit. Returns whether the
    tombstones and the TRUNCATE floor were written (else they follow the commit)."""
    tombstones_first = bool(deleted_keys) and is_initialized(t.target_base_path)
    if tombstones_first:
        write_tombstones(t.target_base_path, new_cp, deleted_keys)
    if result.truncated_at is not None:
        opts[truncate.TRUNCATED_AT_KEY] = ",".join(str(v) for v in result.truncated_at)
        log(f"{t.target_table}: TRUNCATE at {ordering} = {result.truncated_at}: the table is replaced by "
            "the round's events after it")
    floor_first = result.truncated_at is not None and is_initialized(t.target_base_path)
    if floor_first and result.truncated_at is not None:
        truncate.write_floor(t.target_base_path, new_cp, ordering, result.truncated_at)
    return tombstones_first, floor_first


def _write(df, t: Target, opts: dict[str, str], located, overwrite: bool, result: RoundResult,
           clock: float, log_keys_ordering: list[str], log, driver: bool = False) -> None:
    """The round's commit(s): one, or a delete-block-safe split of it (delete_block_safe_parts). Given
    the ordering fields, each located delta commit's logged keys are kept (logkeys.py). `driver`: a small
    round, which Hudi's Java write client may commit from the driver (driver_write.py)."""
    if located is not None:
        opts[PREPPED_OPTION] = "true"  # records carry their locations: no index lookup
        opts.pop(evolve.SET_NULL_OPTION, None)  # Hudi refuses it with prepped records; evolve.py did it
        # every delete carries its event's ordering value: one commit; but Hudi's record-level index
        # drops a key deleted and inserted in one commit (a partition move), so with that index the
        # moves' deletes are committed first (a crash in between: the next round inserts those keys)
        moves_first = located.moves and keyloc.has_record_index(keyloc.table_config(t.target_base_path))
        parts = [located.moved_out, located.rest] if moves_first else [df]
    elif overwrite:
        parts = [df]  # no deletes: the whole table is replaced
    else:
        parts = delete_block_safe_parts(df, t.table_type)
    for i, part in enumerate(parts):
        # the round's metadata (checkpoint, source position) goes with the last commit only:
        # a crash in between re-reads the files, and what the first commit wrote is then unchanged
        last = i == len(parts) - 1
        part_opts = opts if last else {k: v for k, v in opts.items() if not k.startswith("streamer.")}
        before = logkeys.deltacommits_before(t.target_base_path) if log_keys_ordering else set()
        written = driver_write.wrote(part, t, part_opts, located, len(parts), log) if driver else None
        if written is None:
            part.write.format("hudi").options(**part_opts).mode("append").save(t.target_base_path)
        clock = result.lap("write" if i == 0 else f"write {i + 1}", clock)
        if log_keys_ordering:  # the driver's committed rows, else the part (its plan runs again)
            logkeys.record(part.sparkSession, t.target_base_path, part if written is None else written,
                           log_keys_ordering, before, log,
                           inserted=located.inserted if located is not None else None,
                           key_columns=located.key_columns if located is not None else (),
                           key_rows=located.key_rows if located is not None else None)
            clock = result.lap("log keys", clock)
