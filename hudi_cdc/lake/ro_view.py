"""How fresh a MoR table's read-optimized view is (issue 37): the view engines that do not merge logs read
(Trino's Hudi connector, Athena and Hive on `_ro`, and Trino on `_rt` too).

The read-optimized view holds base files only. A write is in it once its changes live in base files: it
wrote no log file (a CoW-like write of new file groups, the bootstrap), or a completed compaction that was
scheduled after it merged its logs (a compaction plan covers the slices' logs written before its instant).
The view is complete through the newest write W such that W and every write before it are in it; its
freshness is the newest source event time of the writes up to W. A write whose logs wait for a
compaction makes the view older from there on, whatever later writes did.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hudi_cdc.common import checkpoints
from hudi_cdc.common.instants import Instant
from hudi_cdc.lake.metadata import write_stats

LOG_MARK = ".log."  # Hudi log file names: .<fileId>_<instant>.log.<version>_<token>


def wrote_logs(meta: Mapping) -> bool:
    """Whether a commit wrote at least one log file (its changes wait for a compaction on `_ro`)."""
    return any(LOG_MARK in str(s.get("path") or "") for s in write_stats(dict(meta)))


def last_compaction(timeline: Sequence[Instant]) -> str:
    """The requested time of the newest completed compaction, "" when none completed."""
    done = [i.requested_time for i in timeline if i.is_compaction and i.is_completed]
    return max(done) if done else ""


def ro_source_ts(writes: Sequence[Instant], metas: Sequence[Mapping], compacted_before: str) -> tuple[int | None, int]:
    """(newest source event time in ms the read-optimized view holds completely, number of writes it
    lacks). `writes` oldest first with their commit metadata `metas` (same order); `compacted_before`:
    the newest completed compaction's requested time."""
    newest: int | None = None
    for i, (inst, meta) in enumerate(zip(writes, metas, strict=True)):
        if inst.requested_time >= compacted_before and wrote_logs(meta):
            return newest, len(writes) - i
        ts = checkpoints.extra_metadata(meta).get(checkpoints.SOURCE_TS_KEY)
        if ts not in (None, "") and str(ts).lstrip("-").isdigit():
            newest = max(newest or int(ts), int(ts))
    return newest, 0
