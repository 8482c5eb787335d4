"""The one reader of a Hudi commit's extra metadata: streamer checkpoints under every key Hudi has
used, and the source position hudi-cdc's streamer records.

Where Hudi's streamers keep their checkpoint in a commit's ``extraMetadata`` (apache/hudi source):

- ``deltastreamer.checkpoint.key``: HoodieDeltaStreamer / DeltaSync (0.x), HoodieStreamer /
  StreamSync 0.14 (``HoodieWriteConfig.STREAMER_CHECKPOINT_KEY``, still this string), and
  ``StreamerCheckpointV1`` in 1.x (table versions < 8). EMR 6.15's HoodieDeltaStreamer writes it.
- ``streamer.checkpoint.key.v2``: ``StreamerCheckpointV2`` (Hudi 1.x, table version 8+); 1.x may
  write the V1 key next to it for older readers. hudi-cdc's own streamer writes this key.
- reset keys ``deltastreamer.checkpoint.reset_key`` (V1) and ``streamer.checkpoint.reset.key.v2``
  (V2): the ``--checkpoint`` a user forced, recorded so the next run does not apply it again;
  ``deltastreamer.checkpoint.ignore_key``: the ``--ignore-checkpoint`` marker (both versions).

A commit carries the checkpoint the run consumed up to; the newest completed commit that carries
one is where the next run resumes (compactions, clustering and cleaning carry none). Within one
commit the V2 key wins over V1. Stdlib only: the Spark job imports it (job_package.SHARED_MODULES).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass

KEY_V2 = "streamer.checkpoint.key.v2"
RESET_KEY_V2 = "streamer.checkpoint.reset.key.v2"
KEY_V1 = "deltastreamer.checkpoint.key"
RESET_KEY_V1 = "deltastreamer.checkpoint.reset_key"
IGNORE_KEY = "deltastreamer.checkpoint.ignore_key"
# read in this order within one commit's metadata
CHECKPOINT_KEYS = (KEY_V2, KEY_V1)
RESET_KEYS = (RESET_KEY_V2, RESET_KEY_V1)

# hudi-cdc's streamer: the newest source event time / ordering value each commit applied
SOURCE_TS_KEY = "streamer.hudi_cdc.max_source_ts_ms"
SOURCE_ORDERING_KEY = "streamer.hudi_cdc.max_ordering"
# rows a commit wrote with a value their lake type could not hold (kept in __rejects, docs/types.md)
REJECTED_ROWS_KEY = "streamer.hudi_cdc.rejected_rows"
# transaction cuts (jobs/stream/cuts.py): the cut a commit ends exactly on, that cut's source LSN,
# and the newest landed file the commit consumed (a later cut naming the same file for the table's
# topic is covered by this commit too: the table had no change in between)
CUT_KEY = "streamer.hudi_cdc.cut"
COMPLETE_LSN_KEY = "streamer.hudi_cdc.complete_lsn"
LAST_FILE_KEY = "streamer.hudi_cdc.last_file"
# a history table's open (current) versions after the commit (jobs/stream/history_write.py); `status` shows it
HISTORY_OPEN_KEY = "streamer.hudi_cdc.history.open_versions"


@dataclass(frozen=True)
class Checkpoint:
    """What one commit's metadata says about the streamer's position."""

    value: str | None  # where the next run resumes; None when the commit carries none
    key: str | None  # the metadata key the value came from
    reset: str | None = None  # the --checkpoint a user forced at this commit
    ignore: str | None = None  # the --ignore-checkpoint marker


def extra_metadata(meta: Mapping | None) -> dict[str, str]:
    """The extra metadata of a commit's metadata as Hudi (``extraMetadata``) or hudi-rs
    (``extra_metadata``) spells it; {} when it has none."""
    if not meta:
        return {}
    extra = meta.get("extraMetadata") or meta.get("extra_metadata") or {}
    return dict(extra) if isinstance(extra, Mapping) else {}


def _first(extra: Mapping[str, str], keys: Iterable[str]) -> tuple[str | None, str | None]:
    for key in keys:
        value = extra.get(key)
        if value not in (None, ""):
            return str(value), key
    return None, None


def checkpoint_in(extra: Mapping[str, str]) -> Checkpoint:
    """The checkpoint (and reset / ignore markers) one commit's extra metadata carries."""
    value, key = _first(extra, CHECKPOINT_KEYS)
    reset, _ = _first(extra, RESET_KEYS)
    ignore, _ = _first(extra, (IGNORE_KEY,))
    return Checkpoint(value=value, key=key, reset=reset, ignore=ignore)


def checkpoint_of(extra: Mapping[str, str]) -> str | None:
    """The checkpoint value of one commit's extra metadata: the V2 key first, then V1; None if empty."""
    return checkpoint_in(extra).value


def newest_checkpoint(metas_newest_first: Iterable[Mapping | None]) -> Checkpoint | None:
    """The checkpoint of the newest commit that carries one (commit metadata dicts, newest first)."""
    for meta in metas_newest_first:
        cp = checkpoint_in(extra_metadata(meta))
        if cp.value is not None:
            return cp
    return None


def newest_value(metas_newest_first: Iterable[Mapping | None], key: str) -> str | None:
    """The value of an extra-metadata key in the newest commit that carries it (non-empty)."""
    for meta in metas_newest_first:
        value = extra_metadata(meta).get(key)
        if value not in (None, ""):
            return str(value)
    return None


@dataclass(frozen=True)
class CutPosition:
    """Where a commit stands among capture's transaction cuts."""

    cut: int  # the cut it ends on when it was written
    lsn: str  # that cut's source LSN: the table is complete through it
    last_file: str  # the newest landed file it consumed


def cut_position(extra: Mapping[str, str]) -> CutPosition | None:
    """The cut one commit's extra metadata records; None for a commit written without cuts."""
    cut, last = extra.get(CUT_KEY), extra.get(LAST_FILE_KEY)
    if cut in (None, "") or last in (None, ""):
        return None
    try:
        number = int(str(cut))
    except ValueError:
        return None
    return CutPosition(number, str(extra.get(COMPLETE_LSN_KEY) or ""), str(last))
