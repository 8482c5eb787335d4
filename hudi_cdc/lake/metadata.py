"""Commit metadata of completed write instants, read by hudi-rs (JSON on v6, Avro on v8+ files)."""

from __future__ import annotations

import json

from hudi_cdc.common.instants import Instant
from hudi_cdc.errors import TableStateError
from hudi_cdc.lake.table import Table


def _hudi_instants(tl) -> dict[tuple, object]:
    """hudi-rs's completed write instants by (requested time, action)."""
    found = {}
    for getter in (tl.get_completed_commits, tl.get_completed_deltacommits, tl.get_completed_replacecommits):
        for hi in getter():
            found[(hi.timestamp, hi.action)] = hi
    return found


def commit_metadata(table: Table, instants: list[Instant]) -> list[dict]:
    """The commit metadata (as a dict) of each completed write instant, in the order given."""
    tl = table.hudi.get_timeline()
    known = _hudi_instants(tl)
    out = []
    for inst in instants:
        hi = known.get((inst.requested_time, inst.action))
        if hi is None:
            raise TableStateError(f"{table.uri}: hudi-rs does not see completed instant "
                                  f"{inst.requested_time} ({inst.action}) of the timeline")
        text = tl.get_instant_metadata_in_json(hi)
        out.append(json.loads(text) if text.strip() else {})
    return out


def write_stats(meta: dict) -> list[dict]:
    """Every HoodieWriteStat of a commit, over all partitions."""
    return [s for stats in (meta.get("partitionToWriteStats") or {}).values() for s in (stats or [])]


def write_totals(meta: dict) -> dict[str, int]:
    """A commit's write-stat sums: records written, inserted, updated and deleted, bytes written, errors."""
    stats = write_stats(meta)

    def total(name: str) -> int:
        return sum(int(s.get(name) or 0) for s in stats)

    return {"written": total("numWrites"), "inserted": total("numInserts"), "updated": total("numUpdateWrites"),
            "deleted": total("numDeletes"), "bytes": total("totalWriteBytes"), "errors": total("totalWriteErrors")}


def is_new_file(stat: dict) -> bool:
    """hudi-cli counts a write stat as an added file when prevCommit is the string "null"."""
    prev = stat.get("prevCommit")
    return prev is not None and str(prev).lower() == "null"
