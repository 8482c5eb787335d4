"""A table's commits as the query commands see them, and user times resolved to commits.

Both engines read time travel by *requested* time (the instant in ``_hoodie_commit_time``) and
incremental ranges by *completion* time (table version 8+; measured on Spark + Hudi 1.2.0 and
hudi-rs 0.5). A user's time means a wall-clock moment: "as of T" shows the commits that had
completed by T. So a time is first resolved to a commit here, and each engine is then given the
instant it compares: the commit's requested time for as-of, completion times for ranges. A time
typed as an instant equal to a commit's requested time names that commit.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import tzinfo
from functools import cached_property
from typing import Literal, overload

from hudi_cdc.common.causes import first_line
from hudi_cdc.common.instants import COMPLETED, Instant
from hudi_cdc.errors import TableStateError
from hudi_cdc.inspect import Table, open_table, read_timeline
from hudi_cdc.lake.metadata import commit_metadata
from hudi_cdc.lake.timeline import completed_writes
from hudi_cdc.query.errors import BadTimeError, BeforeFirstCommitError
from hudi_cdc.query.times import UserTime, read_time, timeline_zone, wall_clock

BEGINNING = "000"  # an incremental range that starts before the first commit


@dataclass(frozen=True)
class Commit:
    requested_time: str  # the instant in _hoodie_commit_time; what time travel compares
    completion_time: str  # when it became visible (= requested_time on version 6 tables)
    action: str  # commit | deltacommit | replacecommit
    planned_action: str | None = None  # compaction, clustering ...

    @property
    def rewrites_only(self) -> bool:
        """Compaction and clustering rewrite files but change no record."""
        return self.planned_action in ("compaction", "clustering", "logcompaction")


@dataclass(frozen=True)
class Range:
    """An incremental range: the commits that completed after `after` up to `until` (inclusive)."""

    after: Commit | None  # None = from the beginning
    until: Commit
    commits: list[Commit]

    @property
    def begin(self) -> str:
        return self.after.completion_time if self.after else BEGINNING

    @property
    def end(self) -> str:
        return self.until.completion_time


class QueryTable:
    """A Hudi table opened for queries: its base URI, record key, zone and completed write commits."""

    def __init__(self, table: Table):
        self.table = table
        self.zone: tzinfo | None = timeline_zone(table.config.get("hoodie.table.timeline.timezone"))

    @property
    def uri(self) -> str:
        return self.table.uri

    @property
    def read_uri(self) -> str:
        """The base path as both engines want it (file:// for local tables)."""
        return self.uri if "://" in self.uri else "file://" + self.uri

    @property
    def is_mor(self) -> bool:
        return self.table.is_mor

    @property
    def record_keys(self) -> list[str]:
        keys = self.table.config.get("hoodie.table.recordkey.fields", "")
        return [k.strip() for k in keys.split(",") if k.strip()]

    @property
    def partition_fields(self) -> list[str]:
        fields = self.table.config.get("hoodie.table.partition.fields", "")
        return [f.split(":")[0].strip() for f in fields.split(",") if f.strip()]

    @cached_property
    def column_types(self) -> dict[str, str]:
        """Column name -> arrow type name (int32, int64, string ...), from hudi-rs."""
        try:
            schema = self.table.hudi.get_schema()
        except Exception as exc:
            raise TableStateError(f"{self.uri}: hudi-rs cannot read the schema: {first_line(exc)}") from None
        return {f.name: str(f.type) for f in schema}

    @cached_property
    def commits(self) -> list[Commit]:
        out = [Commit(inst.requested_time, inst.completion_time or inst.requested_time, inst.action,
                      inst.planned_action) for inst in completed_writes(read_timeline(self.table))]
        if not out:
            raise TableStateError(f"{self.uri}: the table has no completed commits yet")
        return out

    @cached_property
    def cleaned(self) -> bool:
        """True when the cleaner has run: older file versions, hence older states, may be gone."""
        return any(i.is_completed and i.action == "clean" for i in read_timeline(self.table))

    def by_requested(self, instant: str) -> Commit | None:
        return next((c for c in self.commits if c.requested_time == instant), None)

    def wall_clock(self, instant: str | None) -> str | None:
        return wall_clock(instant, self.zone)

    def committed_at(self, requested_time: str | None) -> str | None:
        """Wall-clock completion time of the commit with this requested time (what a row's
        _hoodie_commit_time names)."""
        c = self.by_requested(requested_time) if requested_time else None
        return self.wall_clock(c.completion_time if c else requested_time)

    def read_time(self, text: str) -> UserTime:
        return read_time(text, self.zone)

    @overload
    def commit_at(self, text: str, *, allow_before: Literal[False] = False) -> Commit: ...

    @overload
    def commit_at(self, text: str, *, allow_before: bool) -> Commit | None: ...

    def commit_at(self, text: str, *, allow_before: bool = False) -> Commit | None:
        """The last commit visible at the time `text`: completed at or before it (or named by its
        requested instant). BeforeFirstCommitError when none, unless allow_before (then None)."""
        t = self.read_time(text)
        if t.exact:
            named = self.by_requested(t.instant)
            if named is not None:
                return named
        done = [c for c in self.commits if c.completion_time <= t.instant]
        if done:
            return max(done, key=lambda c: c.completion_time)
        if allow_before:
            return None
        first = min(self.commits, key=lambda c: c.completion_time)
        raise BeforeFirstCommitError(
            f"{text} is before the first commit of {self.uri}: the first commit ({first.requested_time}) "
            f"completed at {self.wall_clock(first.completion_time)}")

    def latest(self) -> Commit:
        return max(self.commits, key=lambda c: c.completion_time)

    def range(self, since: str, until: str | None = None) -> Range:
        after = self.commit_at(since, allow_before=True)
        last = self.commit_at(until) if until else self.latest()
        if after is not None and last.completion_time < after.completion_time:
            raise BadTimeError(f"--until {until} is before --since {since}")
        commits = [c for c in self.commits
                   if (after is None or c.completion_time > after.completion_time)
                   and c.completion_time <= last.completion_time]
        return Range(after, last, commits)

    def metadata(self, commits: Sequence[Commit]) -> dict[str, dict]:
        """Commit metadata (as written by Hudi, read by hudi-rs) by requested time."""
        instants = [Instant(c.requested_time, c.action, COMPLETED, c.completion_time) for c in commits]
        return {c.requested_time: m for c, m in zip(commits, commit_metadata(self.table, instants), strict=True)}


def open_query_table(path: str) -> QueryTable:
    """TableStateError when `path` is not a Hudi table (or one hudi-rs cannot read)."""
    return QueryTable(open_table(path))
