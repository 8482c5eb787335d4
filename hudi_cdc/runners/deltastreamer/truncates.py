"""The 0.14 HoodieDeltaStreamer cannot apply a TRUNCATE (capture lands it as a row with `__op='t'`,
hudi_cdc/capture/unwrap.py): it would apply the row as a delete of a placeholder key and keep every
row the truncate removed. So before any job runs, the landed files each job would read (newer than its
table's checkpoint) are scanned, and a truncate refuses the whole run in one line naming the file;
nothing is written. The recovery is a re-snapshot (docs/source-life.md)."""

from __future__ import annotations

import io
from collections.abc import Sequence
from pathlib import Path

import fastavro

from hudi_cdc.common import storage
from hudi_cdc.config import Pipeline
from hudi_cdc.core import render
from hudi_cdc.errors import DataError

TRUNCATE_OP = "t"


def first_truncate(topic_dir: str, after_mtime_ms: int | None) -> tuple[str, int, dict] | None:
    """(file, record number, record) of the first TRUNCATE among the files newer than the checkpoint."""
    for path, mtime, _size in storage.walk_files(topic_dir):
        if after_mtime_ms is not None and mtime <= after_mtime_ms:
            continue
        data = storage.read_bytes(path)
        if not data:
            continue
        try:
            with io.BytesIO(data) as fh:
                reader = fastavro.reader(fh)
                schema = reader.writer_schema
                fields = schema.get("fields", []) if isinstance(schema, dict) else []
                names = {f["name"] for f in fields}
                if "__op" not in names:
                    continue
                for i, rec in enumerate(reader):
                    if isinstance(rec, dict) and rec.get("__op") == TRUNCATE_OP:
                        return path, i, rec
        except Exception:  # noqa: BLE001 - a corrupt file is the streamer's to name, not this check's
            continue
    return None


def refuse_truncates(pipeline: Pipeline, jobs: Sequence[render.Job], checkpoints: dict[str, str | None]) -> None:
    """Raise DataError for the first job whose unread landed files hold a TRUNCATE. `checkpoints`:
    each job's table checkpoint (newest landed mtime it consumed; None: a new table)."""
    for job in jobs:
        cp = checkpoints.get(job.name)
        found = first_truncate(storage.local(pipeline.topic_dir(job.table)), int(cp) if cp else None)
        if found is None:
            continue
        path, i, rec = found
        name = Path(path).name if "://" not in path else path
        raise DataError(
            f"{name}: record {i} is a TRUNCATE of {rec.get('__schema')}.{rec.get('__table')} at __lsn "
            f"{rec.get('__lsn')}, which HoodieDeltaStreamer {pipeline.hudi.version} cannot apply; nothing was "
            f"written. Re-snapshot {job.table}: hudi-cdc capture --drop-slot, move {pipeline.topic_dir(job.table)} "
            f"aside, hudi-cdc capture --once, hudi-cdc bootstrap --table {job.table} --force (docs/source-life.md)")
