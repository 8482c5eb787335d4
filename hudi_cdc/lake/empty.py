"""Tables bootstrapped empty (issue 38): a source table without rows lands nothing, so `bootstrap` has
nothing to write and no Hudi table comes of it. It records instead that the table (and type) was
bootstrapped with nothing landed; `stream` and `stream --all` then accept the table: its rounds wait
(no error, no commit) until files land, and the first round that finds some creates the Hudi table by
UPSERT from the beginning of the landing. `status` shows such a table as waiting.

The record is a small file under the pipeline's work dir (.hudi-cdc/state/empty/), beside the failure
files `status` reads. A table that exists has no use for it: bootstrap removes it when it writes one.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from hudi_cdc.common import storage
from hudi_cdc.config import TYPE_SUFFIX, Pipeline, is_s3_uri, uri_to_path

EMPTY_DIR = ("state", "empty")  # under the pipeline's work dir (.hudi-cdc/)

# what a landing holds: "missing" (no folder), "empty" (a folder, no file), "data" (a file at least)
MISSING, EMPTY, DATA = "missing", "empty", "data"


def marker(pipeline: Pipeline, table: str, table_type: str) -> Path:
    return Path(pipeline.work_dir, *EMPTY_DIR) / f"{table}_{TYPE_SUFFIX[table_type]}.json"


def mark_empty(pipeline: Pipeline, table: str, table_type: str) -> None:
    path = marker(pipeline, table, table_type)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    tmp.write_text(json.dumps({"table": table, "table_type": table_type, "at": time.time()}))
    tmp.replace(path)


def is_empty_bootstrapped(pipeline: Pipeline, table: str, table_type: str) -> bool:
    return marker(pipeline, table, table_type).is_file()


def clear_empty(pipeline: Pipeline, table: str, table_type: str) -> None:
    marker(pipeline, table, table_type).unlink(missing_ok=True)


def landing_state(pipeline: Pipeline, table: str) -> str:
    """MISSING, EMPTY or DATA: what the table's landing folder (local or s3://) holds now."""
    dirs = [d if is_s3_uri(d) else str(uri_to_path(d)) for d in pipeline.landing_dirs(table)]
    dirs = [d for d in dirs if storage.is_dir(d)]
    if not dirs:
        return MISSING
    return DATA if any(storage.walk_files(d) for d in dirs) else EMPTY
