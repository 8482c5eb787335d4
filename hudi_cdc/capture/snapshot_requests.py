"""`hudi-cdc capture snapshot --table T [--replace]` and `--status`: the command's side of a requested snapshot.

The command readies the database (the source's SnapshotSignals.prepare: the signal table, the table in the
publication) and leaves a request (``<work dir>/capture/snapshots/<slot>/<table>.json``) that the capture on the
pipeline's slot carries out (capture/signals.py, which keeps each request's progress in ``state.json`` beside it).
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path
from typing import Any

from hudi_cdc import sources
from hudi_cdc.common.text import log_progress
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import ConfigError
from hudi_cdc.sources import tables as src
from hudi_cdc.sources.base import BLOCKING, Progress


def requests_dir(pipeline: Pipeline) -> Path:
    return pipeline.work_dir / "capture" / "snapshots" / pipeline.slot_name


def write_json(path: Path, doc: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(doc, indent=1, sort_keys=True))
    os.replace(tmp, path)


def read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        return {}


def request_snapshot(pipeline: Pipeline, table: str, replace: bool = False,
                     progress: Progress = log_progress) -> dict[str, Any]:
    """Prepare the database (signal table; the table and the signal table in the publication) and
    leave a request the capture on the pipeline's slot carries out. Returns what was done."""
    try:
        pipeline.table(table)
    except ConfigError as exc:  # one line naming the file, and the way forward
        raise ConfigError(f"capture snapshot: {exc}: add it to the pipeline first (hudi-cdc add-table, or the "
                          "tables block), then ask again") from None
    signals = sources.for_pipeline(pipeline).signals
    if signals is None:
        raise ConfigError(f"capture snapshot: {src.database(pipeline).kind} sources take no incremental snapshots; "
                          f"{table} is captured from one ({pipeline.source_file})")
    running, kind = signals.prepare(pipeline, table, progress)
    doc = {"table": table, "replace": replace, "id": uuid.uuid4().hex, "requested_at": time.time()}
    write_json(requests_dir(pipeline) / f"{table}.json", doc)
    who = "the running capture" if running else "the next capture"
    how = ("whole, streaming paused while it reads (a blocking snapshot: a partitioned table)" if kind == BLOCKING else
           f"in chunks of {src.database(pipeline).snapshot_chunk_size} rows while streaming goes on")
    progress(f"snapshot of {table} requested: {who} on slot {pipeline.slot_name} takes it {how}"
             + (" (the lake copy is replaced: truncated as of the snapshot's start)" if replace else ""))
    return {"table": table, "replace": replace, "request": doc["id"], "capture": "running" if running else "next"}


def snapshot_status(pipeline: Pipeline) -> list[dict[str, Any]]:
    """One row per table with a request or a snapshot: requested | signalled | completed, and rows."""
    d = requests_dir(pipeline)
    state = read_json(d / "state.json")
    rows = {name: {"table": name, "state": s.get("state", ""), "rows": s.get("rows", 0),
                   "replace": s.get("replace", False), "floor_lsn": s.get("floor")}
            for name, s in state.items()}
    for f in sorted(d.glob("*.json")) if d.exists() else []:
        if f.name != "state.json":
            doc = read_json(f)
            if state.get(doc["table"], {}).get("id") == doc.get("id"):
                continue  # being carried out: its state says how far
            rows[doc["table"]] = {"table": doc["table"], "state": "requested", "rows": 0,
                                  "replace": doc.get("replace", False), "floor_lsn": None}
    return [rows[k] for k in sorted(rows)]
