"""The history of one record: one state per commit that touched it, oldest first.

Each commit that wrote records (compaction and clustering only rewrite files) is read as of
itself, filtered on the record key; a state is new when the record's _hoodie_commit_time
changes, and a record present before a commit and gone after it was deleted by that commit
(hard deletes leave no row, so the delete state is derived from the commit that removed it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hudi_cdc.jobs.stream.truncate import TRUNCATED_AT_KEY
from hudi_cdc.query.errors import UnknownKeyError
from hudi_cdc.query.filters import Condition, key_text
from hudi_cdc.query.rows import COMMIT_TIME, PARTITION, shape
from hudi_cdc.query.timeline import Commit, QueryTable

STATE_COLUMNS = ["instant", "committed_at", "operation", "change"]


def truncated_at(meta: dict) -> str | None:
    """The ordering value of the TRUNCATE a commit applied (hudi-cdc's streamer: jobs/stream/truncate.py)."""
    return (meta.get("extraMetadata") or {}).get(TRUNCATED_AT_KEY) or None


def _operation(meta: dict[str, dict], commit: Commit) -> str | None:
    op = (meta.get(commit.requested_time) or {}).get("operationType")
    return str(op).lower() if op else None


def record_history(engine, qt: QueryTable, conditions: Sequence[Condition],
                   columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """The states of the record the key conditions select; UnknownKeyError when no commit held it."""
    writes = [c for c in qt.commits if not c.rewrites_only]
    meta = qt.metadata(writes)
    states: list[dict[str, Any]] = []
    previous: dict[str, Any] | None = None
    for commit in writes:
        rows = engine.as_of(qt, commit.requested_time, conditions=conditions)
        current = max(rows, key=lambda r: r.get(COMMIT_TIME) or "") if rows else None
        if current is None and previous is None:
            continue
        if current is not None and previous is not None and current.get(COMMIT_TIME) == previous.get(COMMIT_TIME):
            continue
        state: dict[str, Any] = {"instant": commit.requested_time,
                                 "committed_at": qt.wall_clock(commit.completion_time),
                                 "operation": _operation(meta, commit)}
        if current is None:
            assert previous is not None  # both None was skipped above
            # a TRUNCATE removes every row: the commit says so (its ordering value in the metadata)
            state["change"] = "truncate" if truncated_at(meta.get(commit.requested_time) or {}) else "delete"
            values = {k: (v if k in qt.record_keys else None) for k, v in shape(qt, [previous], columns)[0].items()}
        else:
            state["change"] = "insert" if previous is None else "update"
            values = shape(qt, [current], columns)[0]
        values.pop(COMMIT_TIME, None)
        values.pop("committed_at", None)
        if current is None:
            values[PARTITION] = None
        state.update(values)
        states.append(state)
        previous = current
    if not states:
        raise UnknownKeyError(f"no record with {key_text(conditions)} in any of the {len(writes)} commits "
                              f"of {qt.uri}")
    return states
