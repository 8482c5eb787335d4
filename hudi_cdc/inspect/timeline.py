"""The active timeline, read from the instant file names.

hudi-rs gives only requested times; completion times (table version 8+) are in the file names:
  layout 2 (.hoodie/timeline/): <requested>_<completion>.<action> when complete,
                                <requested>.<action>.requested | .inflight before;
  layout 1 (.hoodie/, version 6): <requested>.<action> when complete (no completion time),
                                <requested>.<action>.requested | .inflight, and <requested>.inflight
                                for a commit in flight.
A compaction completes as a commit, a clustering as a replacecommit, a log compaction as a
deltacommit: `planned_action` keeps what was requested.
"""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass
from typing import Dict, List, Optional

from . import storage
from .table import Table

REQUESTED, INFLIGHT, COMPLETED = "REQUESTED", "INFLIGHT", "COMPLETED"
_RANK = {REQUESTED: 0, INFLIGHT: 1, COMPLETED: 2}
# planned action -> the action its completed instant carries
COMPLETES_AS = {"compaction": "commit", "clustering": "replacecommit", "logcompaction": "deltacommit"}
WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")  # hudi-cli's commits timeline

_NAME = re.compile(r"^(?P<req>\d{14,})(?:_(?P<done>\d{14,}))?\.(?P<rest>[a-z_.]+)$")


@dataclass(frozen=True)
class Instant:
    requested_time: str
    action: str  # the action as it completes (commit, deltacommit, replacecommit, rollback, clean, ...)
    state: str  # REQUESTED | INFLIGHT | COMPLETED
    completion_time: Optional[str] = None  # table version 8+ only
    planned_action: Optional[str] = None  # compaction, clustering, ... when the plan names another action
    file_name: str = ""

    @property
    def is_completed(self) -> bool:
        return self.state == COMPLETED

    @property
    def is_compaction(self) -> bool:
        return self.planned_action == "compaction"

    def to_dict(self) -> Dict[str, object]:
        return asdict(self)


def parse_instant_file(name: str) -> Optional[Instant]:
    """The instant a timeline file name stands for, or None for other files."""
    m = _NAME.match(name)
    if not m:
        return None
    req, done, rest = m.group("req"), m.group("done"), m.group("rest")
    parts = rest.split(".")
    if parts[-1] in ("requested", "inflight") and len(parts) == 2:
        state = REQUESTED if parts[-1] == "requested" else INFLIGHT
        planned = parts[0]
        return Instant(req, COMPLETES_AS.get(planned, planned), state,
                       planned_action=planned if planned in COMPLETES_AS else None, file_name=name)
    if parts == ["inflight"]:  # layout 1: a commit in flight
        return Instant(req, "commit", INFLIGHT, file_name=name)
    if len(parts) == 1:
        return Instant(req, parts[0], COMPLETED, completion_time=done, file_name=name)
    return None


def read_timeline(table: Table) -> List[Instant]:
    """Every instant of the active timeline in its latest state, ordered by requested time."""
    best: Dict[str, Instant] = {}
    planned: Dict[str, str] = {}
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


def completed_writes(timeline: List[Instant]) -> List[Instant]:
    """Completed commit, deltacommit and replacecommit instants (hudi-cli's commits timeline)."""
    return [i for i in timeline if i.is_completed and i.action in WRITE_ACTIONS]
