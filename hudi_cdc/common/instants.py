"""Hudi timeline file names: which instant a file stands for, its state and its times.

hudi-rs gives only requested times; completion times (table version 8+) are in the file names:
  layout 2 (.hoodie/timeline/): <requested>_<completion>.<action> when complete,
                                <requested>.<action>.requested | .inflight before;
  layout 1 (.hoodie/, version 6): <requested>.<action> when complete (no completion time),
                                <requested>.<action>.requested | .inflight, and <requested>.inflight
                                for a commit in flight.
A compaction completes as a commit, a clustering as a replacecommit, a log compaction as a
deltacommit: `planned_action` keeps what was requested.

Standard library only: the local streamer job (hudi_cdc/jobs/) imports it in the Spark driver.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass

REQUESTED, INFLIGHT, COMPLETED = "REQUESTED", "INFLIGHT", "COMPLETED"
# planned action -> the action its completed instant carries
COMPLETES_AS = {"compaction": "commit", "clustering": "replacecommit", "logcompaction": "deltacommit"}
WRITE_ACTIONS = ("commit", "deltacommit", "replacecommit")  # hudi-cli's commits timeline
TIMELINE_DIRS = ((".hoodie", "timeline"), (".hoodie",))  # layout 2, then layout 1

_NAME = re.compile(r"^(?P<req>\d{14,})(?:_(?P<done>\d{14,}))?\.(?P<rest>[a-z_.]+)$")


@dataclass(frozen=True)
class Instant:
    requested_time: str
    action: str  # the action as it completes (commit, deltacommit, replacecommit, rollback, clean, ...)
    state: str  # REQUESTED | INFLIGHT | COMPLETED
    completion_time: str | None = None  # table version 8+ only
    planned_action: str | None = None  # compaction, clustering, ... when the plan names another action
    file_name: str = ""

    @property
    def is_completed(self) -> bool:
        return self.state == COMPLETED

    @property
    def is_completed_write(self) -> bool:
        return self.is_completed and self.action in WRITE_ACTIONS

    @property
    def is_compaction(self) -> bool:
        return self.planned_action == "compaction"

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def parse_instant_file(name: str) -> Instant | None:
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


def completed_writes_of(names: Iterable[str]) -> list[Instant]:
    """The completed commit, deltacommit and replacecommit instants among timeline file names."""
    return [i for i in map(parse_instant_file, names) if i is not None and i.is_completed_write]


def local_timeline_names(base_path: str) -> list[str]:
    """The file names of a table's timeline folders (layout 2 and layout 1); none for a non-table.
    A local path or an s3:// URI (listed with boto3, hudi_cdc/common/storage.py)."""
    if base_path.startswith(("s3://", "s3a://")):
        from hudi_cdc.common import storage

        return [n for parts in TIMELINE_DIRS for n in storage.listdir(storage.join(base_path, *parts))]
    out: list[str] = []
    for parts in TIMELINE_DIRS:
        folder = os.path.join(base_path, *parts)
        if os.path.isdir(folder):
            out.extend(os.listdir(folder))
    return out


def table_instants(base_path: str) -> list[Instant]:
    """Every instant a table's timeline files stand for, in any state (a local path or an s3:// URI)."""
    return [i for i in map(parse_instant_file, local_timeline_names(base_path)) if i is not None]


def completed_write_times(base_path: str) -> set[str]:
    """Requested times of a local table's completed write instants."""
    return {i.requested_time for i in completed_writes_of(local_timeline_names(base_path))}
