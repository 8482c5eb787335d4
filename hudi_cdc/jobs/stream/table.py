"""What the streamer reads from the target table: does it have a commit, the checkpoint of the
newest commit that carries one, and the instant a write just committed.

The checkpoint is in the commit metadata (hudi-rs reads it, no JVM round trip); the commit
state comes from the timeline's file names (hudi_cdc/instants.py).
"""

from __future__ import annotations

import json
from collections.abc import Mapping

from hudi_cdc import s3, storage
from hudi_cdc.causes import first_line
from hudi_cdc.instants import completed_write_times
from hudi_cdc.properties import local_path

from .errors import TableReadError

# where HoodieStreamer keeps its checkpoint in the commit metadata (extraMetadata)
CHECKPOINT_KEY = "streamer.checkpoint.key.v2"
# where older HoodieStreamer / HoodieDeltaStreamer releases kept it; read after CHECKPOINT_KEY
LEGACY_CHECKPOINT_KEYS = ("deltastreamer.checkpoint.key", "streamer.checkpoint.key")
# for `hudi-cdc status`: the newest source event time / ordering value each commit applied
SOURCE_TS_KEY = "streamer.hudi_cdc.max_source_ts_ms"
SOURCE_ORDERING_KEY = "streamer.hudi_cdc.max_ordering"
SOURCE_TS_FIELD = "__source_ts_ms"


def has_completed_commit(base_path: str) -> bool:
    return bool(completed_write_times(local_path(base_path)))


def checkpoint_of(extra_metadata: Mapping[str, str]) -> str | None:
    """The checkpoint a commit's extra metadata carries: the current key first, then the legacy ones."""
    for key in (CHECKPOINT_KEY, *LEGACY_CHECKPOINT_KEYS):
        if extra_metadata.get(key):
            return extra_metadata[key]
    return None


def _hudi_timeline(base_path: str, what: str):
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
    tl = _hudi_timeline(base_path, "the streamer checkpoint")
    try:
        instants = list(tl.get_completed_commits()) + list(tl.get_completed_deltacommits())
        instants.sort(key=lambda i: i.timestamp, reverse=True)
        for inst in instants:
            meta = json.loads(tl.get_instant_metadata_in_json(inst) or "{}")
            checkpoint = checkpoint_of(meta.get("extraMetadata") or meta.get("extra_metadata") or {})
            if checkpoint:
                return checkpoint
    except Exception as exc:  # hudi-rs errors and corrupt metadata alike
        raise TableReadError(f"{base_path}: cannot read the streamer checkpoint: {first_line(exc)}") from None
    return None


def latest_instant(base_path: str) -> str:
    """The newest completed commit (what a write just made)."""
    tl = _hudi_timeline(base_path, "the latest commit")
    try:
        latest = tl.get_latest_commit_timestamp()
    except Exception as exc:
        raise TableReadError(f"{base_path}: hudi-rs cannot read the latest commit: {first_line(exc)}") from None
    if not latest:
        raise TableReadError(f"{base_path}: no completed commit after the write")
    return latest
