"""`inspect compactions`: completed and pending compactions of a MoR table, like hudi-cli's
`compactions show all`: each compaction instant, its state, and the size of its plan (the
HoodieCompactionPlan Avro file <requested>.compaction.requested)."""

from __future__ import annotations

import io
from typing import cast

from hudi_cdc.common import storage
from hudi_cdc.errors import TableStateError
from hudi_cdc.lake.table import Table, hudi_rs_errors
from hudi_cdc.lake.timeline import read_timeline

COLUMNS = ["requested_time", "completion_time", "state", "file_groups", "log_files", "log_bytes", "partitions"]


def read_plan(table: Table, requested_time: str) -> dict | None:
    """The compaction plan as a dict, or None when its file is missing or empty."""
    import fastavro

    name = f"{requested_time}.compaction.requested"
    candidates = [storage.join(table.timeline_dir, name)]
    if table.layout == 1:
        candidates.append(storage.join(table.meta_dir, ".aux", name))
    for uri in candidates:
        data = storage.read_bytes(uri)
        if data:
            plan = next(iter(fastavro.reader(io.BytesIO(data))), None)
            return cast("dict | None", plan)  # HoodieCompactionPlan is an Avro record
    return None


@hudi_rs_errors
def compaction_rows(table: Table) -> list[dict[str, object]]:
    """Every compaction of the active timeline, oldest first (an empty list when there is none)."""
    if not table.is_mor:
        raise TableStateError(f"{table.uri}: compactions apply to MERGE_ON_READ tables; this one is {table.table_type}")
    rows: list[dict[str, object]] = []
    for inst in read_timeline(table):
        if not inst.is_compaction:
            continue
        plan = read_plan(table, inst.requested_time) or {}
        ops = plan.get("operations") or []
        rows.append({
            "requested_time": inst.requested_time,
            "completion_time": inst.completion_time,
            "state": inst.state,
            "file_groups": len(ops),
            "log_files": sum(len(op.get("deltaFilePaths") or []) for op in ops),
            "log_bytes": int(sum((op.get("metrics") or {}).get("TOTAL_LOG_FILES_SIZE", 0) for op in ops)),
            "partitions": len({op.get("partitionPath") for op in ops}),
        })
    return rows
