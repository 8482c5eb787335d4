"""The active timeline, read from the instant file names (see hudi_cdc/common/instants.py for the names)."""

from __future__ import annotations

from hudi_cdc.common import storage
from hudi_cdc.common.instants import COMPLETED, COMPLETES_AS, INFLIGHT, REQUESTED, Instant, parse_instant_file
from hudi_cdc.lake.table import Table

_RANK = {REQUESTED: 0, INFLIGHT: 1, COMPLETED: 2}


def read_timeline(table: Table) -> list[Instant]:
    """Every instant of the active timeline in its latest state, ordered by requested time."""
    best: dict[str, Instant] = {}
    planned: dict[str, str] = {}
    for name, _size in storage.list_files(table.timeline_dir):
        inst = parse_instant_file(name)
        if inst is None:
            continue
        if inst.planned_action:
            planned[inst.requested_time] = inst.planned_action
        cur = best.get(inst.requested_time)
        if cur is None or _RANK[inst.state] > _RANK[cur.state]:
            best[inst.requested_time] = inst
    out = []
    for ts in sorted(best):
        inst = best[ts]
        if inst.planned_action is None and ts in planned and COMPLETES_AS[planned[ts]] == inst.action:
            inst = Instant(inst.requested_time, inst.action, inst.state, inst.completion_time, planned[ts],
                           inst.file_name)
        out.append(inst)
    return out


def completed_writes(timeline: list[Instant]) -> list[Instant]:
    """Completed commit, deltacommit and replacecommit instants (hudi-cli's commits timeline)."""
    return [i for i in timeline if i.is_completed_write]
