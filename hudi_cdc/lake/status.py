"""`hudi-cdc status`: how far behind its source each table is, from the timeline and the landing
area only (no JVM).

Per table and type: the last commit and its age, the newest source event applied (the streamer
writes the largest `__source_ts_ms` and ordering value of every round into the commit metadata),
freshness = now - that event time, the landing backlog (files and bytes newer than the checkpoint),
MoR compaction state (pending compactions, delta commits since the last completed one), small
files, the rows written with a value their lake type cannot hold (each commit's count, which the
streamer records: the values are in the rows' `__rejects`), the last failed round the local runner
recorded, and whether a writer holds the table (its lock, probed without taking it: pid, host,
command, age). `breaches()` names every bound a table
exceeds, so schedulers can alert on the exit code.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from hudi_cdc.common import checkpoints, storage
from hudi_cdc.config import TYPE_SUFFIX, Pipeline, history_name, is_s3_uri, uri_to_path
from hudi_cdc.core.lock import probe
from hudi_cdc.errors import TableStateError
from hudi_cdc.jobs.stream.table import SOURCE_TS_FIELD
from hudi_cdc.lake.empty import is_empty_bootstrapped
from hudi_cdc.lake.metadata import commit_metadata
from hudi_cdc.lake.ro_view import last_compaction, ro_source_ts
from hudi_cdc.lake.table import Table, open_table
from hudi_cdc.lake.timeline import completed_writes, read_timeline
from hudi_cdc.lake.version import mismatch

SMALL_FILE_BYTES = 100 * 1024 * 1024  # Hudi's hoodie.parquet.small.file.limit default (104857600)
FAILURES_DIR = ("state", "failures")  # under the pipeline's work dir (.hudi-cdc/)
BOOTSTRAP_LABEL = "bootstrap"  # the runner's label of a bootstrap's jobs, in their failure records
STATUS_THREADS = 4  # tables read at once by pipeline_status


@dataclass
class Bounds:
    """Limits beyond which `status` exits non-zero; None = not checked."""

    max_freshness_seconds: float | None = None
    max_backlog_files: int | None = None


@dataclass
class TableStatus:
    table: str
    table_type: str
    base_path: str
    exists: bool
    table_version: int | None = None  # hoodie.table.version on disk (the pipeline writes hudi.table_version)
    version_mismatch: str | None = None  # why the pipeline's writers would refuse it (lake/version.py)
    last_commit: str | None = None
    last_commit_action: str | None = None
    last_commit_age_seconds: float | None = None
    commits: int = 0
    checkpoint: str | None = None
    source_ts_ms: int | None = None
    source_ordering: str | None = None
    # where source_ts_ms comes from: "commit" (hudi-cdc's streamer records it) or "landing" (the
    # newest landed file the checkpoint covers, for tables HoodieStreamer/HoodieDeltaStreamer wrote)
    source_ts_from: str | None = None
    freshness_seconds: float | None = None
    backlog_files: int = 0
    backlog_bytes: int = 0
    # how long the oldest landed file the table has not applied has waited (0: nothing waits); `status`
    # lists the tables furthest behind first
    behind_seconds: float = 0.0
    pending_compactions: int | None = None
    deltacommits_since_compaction: int | None = None
    # MoR: freshness of the read-optimized view (base files only: what Trino, Athena and Hive `_ro` read;
    # lake/ro_view.py) and the writes whose logs it still lacks
    ro_freshness_seconds: float | None = None
    ro_lagging_commits: int | None = None
    files: int = 0
    small_files: int = 0
    # rows the commits on the timeline wrote with a value their lake type cannot hold (NULL there, the
    # exact source value in __rejects; hudi-cdc's streamer records the count per commit)
    rejected_rows: int = 0
    open_versions: int | None = None  # a history table's open (current) versions after its newest commit
    avg_file_bytes: float | None = None
    inflight: list[str] = field(default_factory=list)
    last_failure: dict | None = None
    writer_held: bool = False
    writer: dict | None = None  # the holder while writer_held: pid, host, command, age_seconds
    waiting: bool = False  # bootstrapped empty (nothing landed), its stream creates it from its first files
    breaches: list[str] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)

    def text_row(self) -> dict:
        """as_dict with the writer as one phrase, for the text and csv tables."""
        row = self.as_dict()
        w = self.writer
        row["writer"] = (f"pid {w['pid']} on {w['host']} ({w['command'] or '?'}), {w['age_seconds']:.0f}s"
                         if w else "-")
        if self.waiting:
            row["last_commit"] = "- (bootstrapped empty: waits for files)"
        if self.open_versions is not None:  # a history table
            row["table"] = f"{self.table} ({self.open_versions} open versions)"
        return row


def instant_epoch(instant: str) -> float:
    """Seconds since the epoch of a Hudi instant time (yyyyMMddHHmmss[SSS], UTC on this project's writers)."""
    fmt = "%Y%m%d%H%M%S%f" if len(instant) > 14 else "%Y%m%d%H%M%S"
    digits = instant[:14] + (instant[14:17].ljust(6, "0") if len(instant) > 14 else "")
    return datetime.strptime(digits, fmt).replace(tzinfo=timezone.utc).timestamp()


def failures_dir(pipeline: Pipeline) -> Path:
    """Where failed rounds are recorded: by the local runner, and by a `stream --all` job per table."""
    return Path(pipeline.work_dir, *FAILURES_DIR)


def _failure_file(pipeline: Pipeline, table: str, table_type: str) -> Path:
    return failures_dir(pipeline) / f"{table}_{TYPE_SUFFIX[table_type]}.json"


def record_failure(pipeline: Pipeline, table: str, table_type: str, label: str, message: str) -> None:
    """Remember a failed round (the runner calls this); `status` shows it until a later commit."""
    path = _failure_file(pipeline, table, table_type)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = {"label": label, "message": message, "at": time.time()}
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps(payload))
    tmp.replace(path)


def bootstrap_failure(pipeline: Pipeline, table: str, table_type: str) -> str | None:
    """The error of the table's bootstrap when its newest recorded failure is one (None otherwise)."""
    failure = _last_failure(pipeline, table, table_type, None)
    return str(failure.get("message") or "") if failure and failure.get("label") == BOOTSTRAP_LABEL else None


def _last_failure(pipeline: Pipeline, table: str, table_type: str, last_commit_epoch: float | None) -> dict | None:
    path = _failure_file(pipeline, table, table_type)
    if not path.exists():
        return None
    failure = json.loads(path.read_text())
    if last_commit_epoch is not None and failure.get("at", 0) < last_commit_epoch:
        return None  # a later round committed: the failure is history
    return failure


LANDING_TS_FILES = 16  # at most this many landed files are read for a table's newest source event time


def landed_files(landing: str) -> list[tuple[str, int, int]]:
    """(path, modification time ms, size) of every landed file of a topic; [] when there is no folder."""
    local = landing if is_s3_uri(landing) else str(uri_to_path(landing))
    return storage.walk_files(local) if storage.is_dir(local) else []


def landed_source_ts(landing: str, checkpoint: str | None, field_name: str = SOURCE_TS_FIELD,
                     files: list[tuple[str, int, int]] | None = None) -> int | None:
    """The newest source event time (ms) in the landed files a checkpoint covers: the largest
    `field_name` of the newest files at or before the checkpoint (modification time, as the
    streamers pick them), read newest first until a file with records gives one. None when the
    files carry no such field or no file is covered. `files`: the landing's listing, if made."""
    if checkpoint in (None, "") or not str(checkpoint).isdigit():
        return None
    listing = landed_files(landing) if files is None else files
    covered = sorted((f for f in listing if f[1] <= int(str(checkpoint))),
                     key=lambda f: f[1], reverse=True)[:LANDING_TS_FILES]
    for path, _mtime, _size in covered:
        ts = _max_field(path, field_name)
        if ts is not None:
            return ts
    return None


def _max_field(path: str, field_name: str) -> int | None:
    import io

    import fastavro

    data = storage.read_bytes(path)
    if not data:
        return None
    try:
        values = [r.get(field_name) for r in fastavro.reader(io.BytesIO(data)) if isinstance(r, dict)]
    except Exception:  # not an Avro file (or corrupt): it says nothing about event times
        return None
    ints = [int(v) for v in values if isinstance(v, int | float)]
    return max(ints) if ints else None


class Listings:
    """Each topic's landing listed once for a whole `status` (a topic's CoW and MoR tables, its backlog and
    its landed event times share it)."""

    def __init__(self) -> None:
        self.by_topic: dict[str, list[tuple[str, int, int]]] = {}
        self.lock = threading.Lock()  # pipeline_status reads tables in threads

    def files(self, landing: str) -> list[tuple[str, int, int]]:
        with self.lock:
            if landing not in self.by_topic:
                self.by_topic[landing] = landed_files(landing)
            return self.by_topic[landing]


def table_status(pipeline: Pipeline, table: str, table_type: str, now: float | None = None,
                 listings: Listings | None = None) -> TableStatus:
    now = time.time() if now is None else now
    listings = listings or Listings()
    base = pipeline.base_path(table, table_type)
    st = TableStatus(table=table, table_type=table_type, base_path=base, exists=False)
    _writer(pipeline, table, table_type, st, now)
    try:
        tbl = open_table(base)
    except TableStateError:
        _backlog(pipeline, table, None, st, listings, now)  # not bootstrapped yet: everything landed is backlog
        st.waiting = is_empty_bootstrapped(pipeline, table, table_type)
        return st
    st.version_mismatch = mismatch(pipeline, table, table_type, tbl.version)
    timeline, writes, last_epoch = _commits(tbl, st, now)
    if writes and st.source_ts_ms is None and not pipeline.table(table).route:
        landing = pipeline.topic_dir(table)
        st.source_ts_ms = landed_source_ts(landing, st.checkpoint, files=listings.files(landing))
        st.source_ts_from = "landing" if st.source_ts_ms is not None else None
        if st.source_ts_ms is not None:
            st.freshness_seconds = round(now - st.source_ts_ms / 1000.0, 3)
    _backlog(pipeline, table, st.checkpoint, st, listings, now)
    if tbl.is_mor:
        compactions = [i for i in timeline if i.is_compaction]
        st.pending_compactions = sum(1 for i in compactions if not i.is_completed)
        done = [i.requested_time for i in compactions if i.is_completed]
        since = done[-1] if done else ""
        st.deltacommits_since_compaction = sum(
            1 for i in writes if i.action == "deltacommit" and i.requested_time > since)
    st.last_failure = _last_failure(pipeline, table, table_type, last_epoch)
    return st


def _ro_view(st: TableStatus, writes, metas_oldest_first, compacted_before: str, now: float) -> None:
    ts, st.ro_lagging_commits = ro_source_ts(writes, metas_oldest_first, compacted_before)
    if st.ro_lagging_commits == 0:
        st.ro_freshness_seconds = st.freshness_seconds  # everything applied is in base files
    elif ts is not None:
        st.ro_freshness_seconds = round(now - ts / 1000.0, 3)


def rejected_rows(metas) -> int:
    """The rows written with a value their lake type cannot hold, summed over the commits' metadata."""
    total = 0
    for meta in metas:
        value = str(checkpoints.extra_metadata(meta).get(checkpoints.REJECTED_ROWS_KEY) or "")
        total += int(value) if value.isdigit() else 0
    return total


def _writer(pipeline: Pipeline, table: str, table_type: str, st: TableStatus, now: float) -> None:
    """Who holds the table's writer lock (local tables; S3 tables rely on Hudi's own lock providers)."""
    if not st.base_path.startswith("file://") or is_s3_uri(pipeline.lake_root):
        return
    state = probe(pipeline, table, table_type)
    st.writer_held = state.held
    st.writer = state.as_dict(now) if state.held else None


def _backlog(pipeline: Pipeline, table: str, checkpoint: str | None, st: TableStatus, listings: Listings,
             now: float) -> None:
    """Landed files newer than the checkpoint: what the next rounds will read (the streamer's rule, over
    the landing's one listing)."""
    last = int(checkpoint) if checkpoint not in (None, "") and str(checkpoint).isdigit() else -1
    pending = [f for d in pipeline.landing_dirs(table) for f in listings.files(d) if f[1] > last]
    st.backlog_files, st.backlog_bytes = len(pending), sum(f[2] for f in pending)
    if pending:
        st.behind_seconds = round(max(0.0, now - min(f[1] for f in pending) / 1000.0), 3)


def _file_figures(tbl: Table, st: TableStatus) -> None:
    sizes = []
    for fs in tbl.hudi.get_file_slices():
        if fs.base_file_name:
            sizes.append(int(fs.base_file_size))
        sizes.extend(int(s) for s in fs.log_file_sizes)
    st.files = len(sizes)
    st.small_files = sum(1 for s in sizes if s < SMALL_FILE_BYTES)
    st.avg_file_bytes = round(sum(sizes) / len(sizes), 1) if sizes else None


def breaches(st: TableStatus, bounds: Bounds) -> list[str]:
    out = []
    label = f"{st.table} ({st.table_type})"
    if bounds.max_freshness_seconds is not None:
        if st.freshness_seconds is None:
            if not (st.waiting and not st.backlog_files):  # an empty table waiting for files is not stale
                out.append(f"{label}: no source event time applied yet")
        elif st.freshness_seconds > bounds.max_freshness_seconds:
            out.append(f"{label}: freshness {st.freshness_seconds:.0f}s > {bounds.max_freshness_seconds:.0f}s")
    if bounds.max_backlog_files is not None and st.backlog_files > bounds.max_backlog_files:
        out.append(f"{label}: backlog {st.backlog_files} file(s) > {bounds.max_backlog_files}")
    if st.last_failure:
        out.append(f"{label}: last round failed: {st.last_failure.get('message')}")
    if st.version_mismatch:
        out.append(st.version_mismatch)
    return out


def _commits(tbl: Table, st: TableStatus, now: float) -> tuple[list, list, float | None]:
    """The timeline's figures into `st`: commits, the newest one, its checkpoint, source time and
    freshness, files. Returns (timeline, completed writes, the newest write's epoch)."""
    st.table_version = tbl.version
    timeline = read_timeline(tbl)
    writes = completed_writes(timeline)
    st.exists = bool(writes)
    st.commits = len(writes)
    st.inflight = [i.requested_time for i in timeline if not i.is_completed]
    if not writes:
        return timeline, writes, None
    last = writes[-1]
    st.last_commit, st.last_commit_action = last.requested_time, last.action
    last_epoch = instant_epoch(last.completion_time or last.requested_time)
    st.last_commit_age_seconds = round(now - last_epoch, 3)
    metas = list(reversed(commit_metadata(tbl, writes)))  # newest first
    found = checkpoints.newest_checkpoint(metas)
    st.checkpoint = found.value if found else None
    ts = checkpoints.newest_value(metas, checkpoints.SOURCE_TS_KEY)
    st.source_ts_ms = int(ts) if ts else None
    st.source_ts_from = "commit" if ts else None
    st.source_ordering = checkpoints.newest_value(metas, checkpoints.SOURCE_ORDERING_KEY)
    st.rejected_rows = rejected_rows(metas)
    opened = checkpoints.newest_value(metas, checkpoints.HISTORY_OPEN_KEY)
    st.open_versions = int(opened) if opened else None
    if st.source_ts_ms is not None:
        st.freshness_seconds = round(now - st.source_ts_ms / 1000.0, 3)
    _file_figures(tbl, st)
    if tbl.is_mor:
        _ro_view(st, writes, list(reversed(metas)), last_compaction(timeline), now)
    return timeline, writes, last_epoch


def history_status(pipeline: Pipeline, table: str, table_type: str, now: float | None = None) -> TableStatus:
    """A table's history table (`history: scd2`): its commits and files (the streamer writes it in the
    table's rounds: writer, backlog and failures are the table's)."""
    now = time.time() if now is None else now
    base = pipeline.history_base_path(table, table_type)
    st = TableStatus(table=history_name(table), table_type=table_type, base_path=base, exists=False)
    try:
        tbl = open_table(base)
    except TableStateError:
        return st
    _commits(tbl, st, now)
    return st


def pipeline_status(pipeline: Pipeline, table: str | None = None, table_type: str | None = None,
                    bounds: Bounds | None = None, now: float | None = None) -> list[TableStatus]:
    """Every table's status, the furthest behind first (`furthest_behind_first`); each topic's landing
    listed once."""
    bounds = bounds or Bounds()
    now = time.time() if now is None else now
    listings = Listings()
    targets = [(name, tt) for name, tt in pipeline.targets(table) if not table_type or tt == table_type]

    def one(target: tuple[str, str]) -> TableStatus:
        st = table_status(pipeline, target[0], target[1], now, listings)
        st.breaches = breaches(st, bounds)
        return st

    # hudi-rs releases the GIL while it reads a table: 200 tables took 4.8 s in turn, 1.7 s over 4 threads
    with ThreadPoolExecutor(max_workers=max(1, min(STATUS_THREADS, len(targets)))) as pool:
        out = list(pool.map(one, targets))
    rows = []
    for st in furthest_behind_first(out):
        rows.append(st)
        if pipeline.table(st.table).history:  # a history table right after its table
            rows.append(history_status(pipeline, st.table, st.table_type, now))
    return rows


def furthest_behind_first(rows: list[TableStatus]) -> list[TableStatus]:
    """The tables whose oldest unapplied landed file has waited longest first; then those whose round
    failed; then the stalest applied event (no event time: last); the pipeline's order otherwise."""
    def key(ix: tuple[int, TableStatus]):
        i, st = ix
        fresh = st.freshness_seconds
        return (-st.behind_seconds, st.last_failure is None, fresh is None, -(fresh or 0.0), i)

    return [st for _, st in sorted(enumerate(rows), key=key)]


COLUMNS: Sequence[str] = ("table", "table_type", "table_version", "last_commit", "last_commit_age_seconds",
                          "freshness_seconds", "behind_seconds", "backlog_files", "backlog_bytes",
                          "pending_compactions", "deltacommits_since_compaction", "ro_freshness_seconds", "files",
                          "small_files", "rejected_rows", "last_failure", "writer")
