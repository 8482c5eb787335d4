"""What `hudi-cdc report` draws, per table: read from the timeline and commit metadata with the same
functions as `inspect` and `status` (no JVM), as plain data the charts and the page share."""

from __future__ import annotations

from dataclasses import dataclass, field

from hudi_cdc.common.checkpoints import SOURCE_TS_KEY, checkpoint_of, extra_metadata
from hudi_cdc.common.instants import Instant
from hudi_cdc.errors import TableStateError
from hudi_cdc.inspect.commits import summarize
from hudi_cdc.lake.metadata import commit_metadata, write_stats
from hudi_cdc.lake.status import instant_epoch, landed_files, landed_source_ts
from hudi_cdc.lake.table import Table, hudi_rs_errors, open_table
from hudi_cdc.lake.timeline import completed_writes, read_timeline


@dataclass
class CommitPoint:
    instant: str
    action: str
    at: float  # epoch seconds of the commit's completion (its requested time on table version 6)
    operation: str | None
    inserted: int
    updated: int
    deleted: int
    written: int
    bytes_written: int
    log_bytes: int  # bytes this commit appended to log files (MoR delta commits)
    compaction: bool
    freshness_seconds: float | None  # commit time - newest source event time it applied
    source_ts_ms: int | None  # that event time (hudi-cdc's streamer writes it into every commit)


@dataclass
class TableReport:
    label: str
    base_path: str
    table_type: str
    version: int
    commits: list[CommitPoint] = field(default_factory=list)
    file_sizes: list[int] = field(default_factory=list)
    base_file_sizes: list[int] = field(default_factory=list)
    log_file_sizes: list[int] = field(default_factory=list)
    pending_compactions: int = 0
    error: str | None = None  # why the table could not be read (shown instead of its charts)

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    def totals(self) -> dict[str, int | None]:
        """The figures the page's summary shows: `inspect commits` rows summed, records over the writes
        only (a compaction rewrites records, it does not change them)."""
        c = self.commits
        w = [p for p in c if not p.compaction]
        return {"commits": len(c), "inserted": sum(p.inserted for p in w), "updated": sum(p.updated for p in w),
                "deleted": sum(p.deleted for p in w), "compactions": len(c) - len(w),
                "files": len(self.file_sizes), "total_bytes": sum(self.file_sizes),
                "source_ts_ms": next((p.source_ts_ms for p in reversed(c) if p.source_ts_ms is not None), None)}


def _epoch(inst: Instant) -> float:
    return instant_epoch(inst.completion_time or inst.requested_time)


def _int(value: object) -> int:
    return int(value) if isinstance(value, int | float | str) else 0


def _log_bytes(meta: dict) -> int:
    return sum(int(s.get("totalWriteBytes") or 0) for s in write_stats(meta) if ".log." in str(s.get("path") or ""))


def _source_ts(meta: dict) -> int | None:
    ts = extra_metadata(meta).get(SOURCE_TS_KEY)
    return int(ts) if ts not in (None, "") else None


class _Landing:
    """Source event times from the landed files a commit's checkpoint covers, for commits whose
    writer (HoodieStreamer) records none; the landing is listed once."""

    def __init__(self, landing: str | None):
        self.landing = landing
        self.files: list | None = None
        self.seen: dict[str, int | None] = {}

    def source_ts(self, meta: dict) -> int | None:
        checkpoint = checkpoint_of(extra_metadata(meta))
        if not self.landing or checkpoint is None:
            return None
        if checkpoint not in self.seen:
            if self.files is None:
                self.files = landed_files(self.landing)
            self.seen[checkpoint] = landed_source_ts(self.landing, checkpoint, files=self.files)
        return self.seen[checkpoint]


@hudi_rs_errors
def _read(table: Table, report: TableReport, landing: str | None = None) -> None:
    timeline = read_timeline(table)
    writes = completed_writes(timeline)
    from_landing = _Landing(landing)
    for inst, meta in zip(writes, commit_metadata(table, writes), strict=True):
        s = summarize(meta)
        at = _epoch(inst)
        ts = _source_ts(meta)
        if ts is None and not inst.is_compaction:
            ts = from_landing.source_ts(meta)
        report.commits.append(CommitPoint(
            instant=inst.requested_time, action=inst.action, at=at, operation=str(s["operation"] or "") or None,
            inserted=_int(s["records_inserted"]), updated=_int(s["records_updated"]),
            deleted=_int(s["records_deleted"]), written=_int(s["records_written"]),
            bytes_written=_int(s["bytes_written"]), log_bytes=_log_bytes(meta),
            compaction=inst.is_compaction, source_ts_ms=ts,
            freshness_seconds=None if ts is None else round(at - ts / 1000.0, 3)))
    report.pending_compactions = sum(1 for i in timeline if i.is_compaction and not i.is_completed)
    if writes:
        for fs in table.hudi.get_file_slices():
            if fs.base_file_name:
                report.base_file_sizes.append(int(fs.base_file_size))
            report.log_file_sizes.extend(int(s) for s in fs.log_file_sizes)
        report.file_sizes = report.base_file_sizes + report.log_file_sizes


def table_report(label: str, base_path: str, landing: str | None = None) -> TableReport:
    """The report data of one table; a table that cannot be read gets `error` (one line) instead.
    `landing`: the table's topic folder, for the source event times of commits that record none."""
    try:
        table = open_table(base_path)
    except TableStateError as exc:
        return TableReport(label, base_path, "", 0, error=str(exc))
    report = TableReport(label, table.uri, table.table_type, table.version)
    try:
        _read(table, report, landing)
    except TableStateError as exc:
        report.error = str(exc)
    return report
