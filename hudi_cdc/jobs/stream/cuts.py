"""Cuts: the transaction boundaries at which capture landed every table's files at once.

Capture (hudi_cdc/capture/txn.py) closes all open files of the pipeline together at a source
transaction boundary and then writes one small JSON per cut, ``<landing root>/_hudi_cdc_cuts/
cut-<n, 12 digits>.json``: ``{"cut": n, "lsn": ..., "ts_ms": ..., "transactions": ...,
"topics": {topic: newest landed file name or null}}``. A table whose lake commit consumed its
files up to and including the cut's file for its topic holds exactly the source's transactions up
to the cut: no more, no less (a table with no change since an earlier cut names the same file again).

The streamer ends every round on a cut's file (``trim``: files landed after the newest cut wait for
the next one) and records the cut in the commit's extra metadata (checkpoints.CUT_KEY ...), so
every lake commit applies whole transactions. The folder starts with ``_``: file listings skip it.
Stdlib (and hudi_cdc.common.storage) only: the Spark job imports it.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterator

from hudi_cdc.common import storage

CUTS_DIR = "_hudi_cdc_cuts"
# files landed this long ago with no cut naming them never get one (a capture that died between landing
# and its cut, then a writer that writes no cuts, e.g. Kafka Connect): applied without a cut
NO_CUT_AFTER_MS = 300_000
_NAME = re.compile(r"^cut-(\d{12})\.json$")
_OFFSET = re.compile(r"\+(\d+)\.avro$")


def cut_name(number: int) -> str:
    return f"cut-{number:012d}.json"


def cuts_dir(landing_root: str) -> str:
    return storage.join(landing_root, CUTS_DIR)


def topic_of_root(dfs_root: str) -> tuple[str, str] | None:
    """(landing root, topic) of a table's source root laid out as <root>/<topic>/partition=<p>;
    None for another layout (no cuts apply)."""
    parts = dfs_root.rstrip("/").rsplit("/", 2)
    if len(parts) != 3 or not parts[2].startswith("partition="):
        return None
    return parts[0], parts[1]


def cut_numbers(folder: str) -> list[int]:
    """The cut numbers in a cuts folder, oldest first ([] when there is none)."""
    return sorted(int(m.group(1)) for n in storage.listdir(folder) if (m := _NAME.match(n)))


def read_cut(folder: str, number: int) -> dict | None:
    data = storage.read_bytes(storage.join(folder, cut_name(number)))
    if data is None:
        return None
    try:
        cut = json.loads(data)
    except ValueError as exc:
        raise ValueError(f"cut file {storage.join(folder, cut_name(number))} is not JSON: {exc}") from None
    if not isinstance(cut, dict) or not isinstance(cut.get("topics"), dict):
        raise ValueError(f"cut file {storage.join(folder, cut_name(number))} has no topics")
    return cut


def newest_first(folder: str, ceiling: int | None = None) -> Iterator[dict]:
    """Every cut, newest first (read one by one: callers stop early); ``ceiling``: none newer than it."""
    for n in reversed(cut_numbers(folder)):
        if ceiling is not None and n > ceiling:
            continue
        cut = read_cut(folder, n)
        if cut is not None:
            yield cut


def file_offset(name: str) -> int:
    m = _OFFSET.search(name)
    return int(m.group(1)) if m else -1


def folder_of_root(dfs_root: str | None) -> str | None:
    """The cuts folder of the landing a table's source root is in (None: another layout, no cuts)."""
    where = topic_of_root(dfs_root) if dfs_root else None
    return cuts_dir(where[0]) if where is not None else None


def newest_number(dfs_root: str) -> int | None:
    """The newest cut of the landing a table's source root is in (None: no cuts there)."""
    folder = folder_of_root(dfs_root)
    numbers = cut_numbers(folder) if folder is not None else []
    return numbers[-1] if numbers else None


def trim(files: list, dfs_root: str, ceiling: int | None = None) -> tuple[list, dict | None, bool]:
    """The round's files (oldest first, (path, mtime, size)) cut back to end on the newest cut's file
    for this table's topic (``ceiling``: the newest cut no newer than it). Returns (files, the cut or None,
    waiting): waiting when cuts exist for the topic but none ends among the files (they wait for the next
    cut). No cuts: the files unchanged."""
    where = topic_of_root(dfs_root)
    if not files or where is None:
        return files, None, False
    root, topic = where
    folder = cuts_dir(root)
    names = [str(f[0]).rsplit("/", 1)[-1] for f in files]
    index = {n: i for i, n in enumerate(names)}
    first = min(file_offset(n) for n in names)
    seen_topic = False
    for cut in newest_first(folder, ceiling):
        if topic not in cut["topics"]:
            continue
        seen_topic = True
        name = cut["topics"][topic]
        if name in index:
            return files[:index[name] + 1], cut, False
        if name is None or file_offset(name) < first:
            break  # older cuts end on older files still
    if not seen_topic:
        return files, None, False
    return [], None, True


def apply(files: list, new_cp: str | None, dfs_root: str, checkpoint: str | None, table: str,
          log=print, now_ms: int | None = None, trimmer=None, ceiling: int | None = None
          ) -> tuple[list, str | None, dict[str, str]]:
    """The round's hook: its files ending on a cut, its checkpoint, and the commit metadata naming
    the cut (empty when no cut applies). Files past the newest cut that landed NO_CUT_AFTER_MS ago or
    earlier will never get one: the round takes them too, without a cut (capture writes its cut right
    after the files; only a capture that died in between, followed by another writer, leaves them).
    ``trimmer``: a routed table's trim over its shards' topics (routed.py), in place of ``trim``;
    ``ceiling``: the newest cut the round may end on (a multi-table --once run pins one for all its tables)."""
    from hudi_cdc.common import checkpoints

    kept, cut, waiting = trimmer(files) if trimmer is not None else trim(files, dfs_root, ceiling)
    now_ms = int(time.time() * 1000) if now_ms is None else now_ms
    if (len(kept) < len(files) and int(files[-1][1]) <= now_ms - NO_CUT_AFTER_MS
            and (ceiling is None or trimmer is not None or len(trim(files, dfs_root)[0]) < len(files))):
        log(f"{table}: {len(files) - len(kept)} landed file(s) got no transaction cut in "
            f"{NO_CUT_AFTER_MS // 1000} s (a writer that writes no cuts?): applied without one")
        return files, new_cp, {}
    if waiting:
        log(f"{table}: {len(files)} landed file(s) wait for capture's next transaction cut")
        return [], checkpoint, {}
    if cut is None:
        return files, new_cp, {}
    if len(kept) < len(files):
        log(f"{table}: round ends on cut {cut['cut']}; {len(files) - len(kept)} newer file(s) wait for the next")
    return kept, str(kept[-1][1]), {checkpoints.CUT_KEY: str(cut["cut"]),
                                    checkpoints.COMPLETE_LSN_KEY: str(cut.get("lsn") or ""),
                                    checkpoints.LAST_FILE_KEY: str(kept[-1][0]).rsplit("/", 1)[-1]}
