"""What the streamer reads from the target table: does it have a commit, the checkpoint of the
newest commit that carries one, and the instant a write just committed.

The checkpoint is in the commit metadata (hudi-rs reads it, no JVM round trip); the commit
state comes from the timeline's file names (hudi_cdc/common/instants.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from hudi_cdc.common import checkpoints, s3, storage
from hudi_cdc.common.causes import first_line
from hudi_cdc.common.instants import completed_write_times
from hudi_cdc.common.properties import local_path
from hudi_cdc.jobs.stream.errors import TableReadError

# Hudi's meta columns, in the order the prepped write path reads them by position
META = ("_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name")


def base_file_instant(name: str) -> str:
    """The instant that wrote a base file (`<file id>_<write token>_<instant>.parquet`)."""
    return name.rsplit("_", 1)[-1].split(".", 1)[0]


# where this streamer keeps its checkpoint in the commit metadata (HoodieStreamer 1.x's V2 key);
# every key Hudi has used is read (hudi_cdc/common/checkpoints.py), so a table HoodieStreamer or
# HoodieDeltaStreamer wrote resumes where it stopped
CHECKPOINT_KEY = checkpoints.KEY_V2
LEGACY_CHECKPOINT_KEYS = tuple(k for k in checkpoints.CHECKPOINT_KEYS if k != CHECKPOINT_KEY)
# for `hudi-cdc status`: the newest source event time / ordering value each commit applied
SOURCE_TS_KEY = checkpoints.SOURCE_TS_KEY
SOURCE_ORDERING_KEY = checkpoints.SOURCE_ORDERING_KEY
SOURCE_TS_FIELD = "__source_ts_ms"


def has_completed_commit(base_path: str) -> bool:
    return bool(completed_write_times(local_path(base_path)))


def checkpoint_of(extra_metadata: Mapping[str, str]) -> str | None:
    """The checkpoint a commit's extra metadata carries: the V2 key first, then the V1 one."""
    return checkpoints.checkpoint_of(extra_metadata)


def hudi_timeline(base_path: str, what: str):
    try:
        import hudi  # noqa: F401
    except ImportError as exc:
        raise TableReadError(f"{base_path}: the hudi package (hudi-rs) is needed to read {what} "
                             f"(pip install hudi): {first_line(exc)}") from None
    try:
        return s3.hudi_table_builder(base_path).build().get_timeline()
    except Exception as exc:  # hudi-rs raises HudiCoreError and OSError
        raise TableReadError(f"{base_path}: hudi-rs cannot read the timeline for {what}: {first_line(exc)}") from None


def is_initialized(base_path: str) -> bool:
    """Has Hudi created the table (its hoodie.properties)?"""
    return storage.exists(storage.join(local_path(base_path), ".hoodie", "hoodie.properties"))


def read_checkpoint(base_path: str) -> str | None:
    """The checkpoint of the newest completed commit that carries one; None for a new table.

    Never None for a table whose checkpoint cannot be read: the stream would read every file again."""
    if not is_initialized(base_path):
        return None
    try:
        found = checkpoints.newest_checkpoint(commit_metas_newest_first(base_path, "the streamer checkpoint"))
    except TableReadError:
        raise
    except Exception as exc:  # hudi-rs errors and corrupt metadata alike
        raise TableReadError(f"{base_path}: cannot read the streamer checkpoint: {first_line(exc)}") from None
    return found.value if found else None


def commit_metas_newest_first(base_path: str, what: str):
    """The completed writes' commit metadata, newest first, read one by one (callers stop early). A TRUNCATE
    round commits a replacecommit (insert_overwrite_table): it counts too, else the next round would read the
    truncate round's files again and overwrite the table once more."""
    tl = hudi_timeline(base_path, what)
    instants = [*tl.get_completed_commits(), *tl.get_completed_deltacommits(), *tl.get_completed_replacecommits()]
    instants.sort(key=lambda i: i.timestamp, reverse=True)
    return (json.loads(tl.get_instant_metadata_in_json(inst) or "{}") for inst in instants)


def latest_instant(base_path: str) -> str:
    """The newest completed commit (what a write just made)."""
    tl = hudi_timeline(base_path, "the latest commit")
    try:
        latest = tl.get_latest_commit_timestamp()
    except Exception as exc:
        raise TableReadError(f"{base_path}: hudi-rs cannot read the latest commit: {first_line(exc)}") from None
    if not latest:
        raise TableReadError(f"{base_path}: no completed commit after the write")
    return latest
