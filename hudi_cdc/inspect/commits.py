"""`inspect commits`: one row per completed write instant (commit, deltacommit, replacecommit), oldest
first, with the figures hudi-cli's `commits show` prints and the operation, inserts and deletes."""

from __future__ import annotations

from hudi_cdc.errors import TableStateError
from hudi_cdc.lake.metadata import commit_metadata, is_new_file, write_stats, write_totals
from hudi_cdc.lake.table import Table, hudi_rs_errors
from hudi_cdc.lake.timeline import completed_writes, read_timeline

COLUMNS = ["requested_time", "completion_time", "action", "operation", "records_written", "records_inserted",
           "records_updated", "records_deleted", "files_added", "files_updated", "files_replaced",
           "bytes_written", "partitions_written", "write_errors"]


def require_commits(table: Table, instants: list) -> None:
    if not instants:
        raise TableStateError(f"{table.uri}: the table is empty (no completed commits yet)")


def summarize(meta: dict) -> dict[str, object]:
    """The totals of one commit's metadata, named as hudi-cli's HoodieCommitMetadata.fetch* computes them."""
    stats = write_stats(meta)
    totals = write_totals(meta)
    partitions = sorted((meta.get("partitionToWriteStats") or {}).keys())
    replaced = meta.get("partitionToReplaceFileIds") or {}
    return {
        "operation": meta.get("operationType"),
        "records_written": totals["written"],
        "records_inserted": totals["inserted"],
        "records_updated": totals["updated"],
        "records_deleted": totals["deleted"],
        "files_added": sum(1 for s in stats if is_new_file(s)),
        "files_updated": sum(1 for s in stats if s.get("prevCommit") is not None and not is_new_file(s)),
        "files_replaced": sum(len(v or []) for v in replaced.values()),
        "bytes_written": totals["bytes"],
        "partitions_written": len(partitions),
        "write_errors": totals["errors"],
        "partitions": partitions,
    }


@hudi_rs_errors
def commit_rows(table: Table) -> list[dict[str, object]]:
    """One dict per completed write instant, oldest first; TableStateError on an empty table."""
    instants = completed_writes(read_timeline(table))
    require_commits(table, instants)
    rows: list[dict[str, object]] = []
    for inst, meta in zip(instants, commit_metadata(table, instants), strict=True):
        row: dict[str, object] = {"requested_time": inst.requested_time, "completion_time": inst.completion_time,
               "action": inst.action, "planned_action": inst.planned_action}
        row.update(summarize(meta))
        rows.append(row)
    return rows
