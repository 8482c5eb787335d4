"""The schema history Debezium's binlog connectors need (every DDL since the snapshot, to decode the row
events): a file beside the offsets (FileSchemaHistory), guarded like the offsets. A kill while Debezium
appends to it leaves a partial last line, which is cut (that DDL's offsets were never committed: it is
read again from the binlog)."""

from __future__ import annotations

from pathlib import Path

from hudi_cdc.config import Pipeline
from hudi_cdc.errors import SourceError


def history_file(pipeline: Pipeline, work_dir: Path) -> Path:
    return work_dir / f"schema-history-{pipeline.slot_name}.dat"


def guard_history(path: Path, offsets: Path, progress) -> None:
    """A partial last line (a kill during FileSchemaHistory's append) is cut; a history missing while
    offsets exist is refused (Debezium could not decode the binlog without it)."""
    if not path.exists():
        if offsets.exists():
            raise SourceError(f"{path}: the schema history is missing but offsets exist ({offsets}): "
                              "capture --drop-slot takes a new snapshot")
        return
    import json

    data = path.read_bytes()
    lines = data.split(b"\n")
    tail = lines[-1]
    good = lines[:-1]
    for i, line in enumerate(good):
        try:
            json.loads(line)
        except ValueError:
            raise SourceError(f"{path}: line {i + 1} of the schema history is not JSON; capture --drop-slot "
                              "takes a new snapshot") from None
    if tail.strip():
        try:
            json.loads(tail)
            return  # a complete last record without its newline
        except ValueError:
            tmp = path.with_name(path.name + ".cut")
            tmp.write_bytes(b"".join(line + b"\n" for line in good))
            tmp.replace(path)
            progress(f"{path.name}: cut a partial last record (a kill while Debezium wrote it); that DDL is "
                     "read again from the binlog")
