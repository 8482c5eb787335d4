"""`inspect files`: the latest file slices per partition, with base and log files and sizes (hudi-rs)."""

from __future__ import annotations

from hudi_cdc.inspect.commits import require_commits
from hudi_cdc.lake.table import Table, hudi_rs_errors
from hudi_cdc.lake.timeline import read_timeline

COLUMNS = ["partition", "file_id", "base_instant", "base_file", "base_bytes", "log_files", "log_bytes", "total_bytes"]


@hudi_rs_errors
def file_slice_rows(table: Table) -> list[dict[str, object]]:
    """One dict per file slice of the latest snapshot, ordered by partition and file id."""
    require_commits(table, [i for i in read_timeline(table) if i.is_completed])
    rows = []
    for fs in table.hudi.get_file_slices():
        log_sizes = [int(s) for s in fs.log_file_sizes]
        rows.append({
            "partition": fs.partition_path,
            "file_id": fs.file_id,
            "base_instant": fs.creation_instant_time,
            "base_file": fs.base_file_name or None,
            "base_bytes": int(fs.base_file_size) if fs.base_file_name else 0,
            "log_files": len(log_sizes),
            "log_bytes": sum(log_sizes),
            "total_bytes": int(fs.total_size_bytes()),
            "log_file_names": list(fs.log_file_names),
        })
    rows.sort(key=lambda r: (r["partition"], r["file_id"]))
    return rows
