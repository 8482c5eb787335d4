"""The 0.14 HoodieDeltaStreamer cannot fill unchanged TOASTed values: Debezium's placeholder
(`__debezium_unavailable_value`, REPLICA IDENTITY DEFAULT) would be written into the lake as a value
(Hudi's PostgresDebeziumAvroPayload handles string/bytes of Debezium's own envelope, not the
flattened S3-sink records hudi-cdc lands). So before each job the files it will read (those after
the table's checkpoint) are scanned, and a placeholder refuses the job in one line naming the file,
column and key; nothing is written (docs/schema-changes.md, "TOAST")."""

from __future__ import annotations

import io
from pathlib import Path
from typing import Any

import fastavro

from hudi_cdc.common import storage
from hudi_cdc.common.properties import local_path
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import DataError
from hudi_cdc.jobs.stream.files import list_source_files
from hudi_cdc.jobs.stream.toast import DEFAULT_PLACEHOLDER, is_placeholder

_NO_LIMIT = 1 << 62


def first_placeholder(paths: list[str], keys: list[str], placeholder: str = DEFAULT_PLACEHOLDER):
    """(file, column, key) of the first record carrying the placeholder, or None."""
    for path in paths:
        data = storage.read_bytes(path) or b""
        for record in fastavro.reader(io.BytesIO(data)):
            rec: dict[str, Any] = record  # type: ignore[assignment]  # a record schema gives dicts
            for col, value in rec.items():
                if col in keys or col.startswith("__") or value is None:
                    continue
                if is_placeholder(value, placeholder):
                    return path, col, ", ".join(f"{k}={rec.get(k)!r}" for k in keys)
    return None


def refuse_placeholders(pipeline: Pipeline, table: str, checkpoint: str | None) -> None:
    """DataError (one line) when a landed file after `checkpoint` carries an unchanged-TOAST placeholder."""
    root = local_path(pipeline.topic_dir(table))
    if not storage.is_dir(root):
        return
    files, _ = list_source_files(root, checkpoint, _NO_LIMIT)
    hit = first_placeholder([f[0] for f in files], list(pipeline.table(table).record_keys))
    if hit:
        path, col, key = hit
        raise DataError(f"{Path(path).name}: column {col} of {table} ({key}) carries Debezium's unchanged-TOAST "
                        f"placeholder, which hudi.engine hoodiestreamer (HoodieDeltaStreamer 0.14) would write into "
                        f"the lake; set REPLICA IDENTITY FULL on the source table of {table} and re-land it "
                        "(capture --table), or run it with hudi.engine hudi-cdc (fills it); nothing was written")
