"""Which landed files a round reads (DFSPathSelector's rule), and a check of each before Spark."""

from __future__ import annotations

import io
import json

from hudi_cdc import storage
from hudi_cdc.causes import first_line
from hudi_cdc.properties import local_path

from .errors import JobInputError

IGNORED_PREFIXES = storage.IGNORED_PREFIXES
SourceFile = tuple[str, int, int]  # (local path or s3:// URI, modification time in ms, size)


def _walk(root: str) -> list[SourceFile]:
    """Local files by os.walk, S3 objects by a listing (LastModified as the modification time)."""
    return storage.walk_files(root)


def list_source_files(root: str, checkpoint: str | None, source_limit: int) -> tuple[list[SourceFile], str | None]:
    """Files newer than the checkpoint, oldest first, as DFSPathSelector picks them.

    Returns ([(path, mtime_ms, size)], new_checkpoint). Unlike DFSPathSelector, a round always
    takes at least one file, so a file larger than the source limit cannot stall the stream.
    """
    local = local_path(root)
    if not storage.is_dir(local):
        raise JobInputError(f"landing directory {root} does not exist")
    last = int(checkpoint) if checkpoint not in (None, "") else None
    picked: list[SourceFile] = []
    total = 0
    for path, mtime, size in _walk(local):
        if last is not None and mtime <= last:
            continue
        if picked and total + size > source_limit and mtime != picked[-1][1]:
            break  # never split files sharing one modification time across rounds
        picked.append((path, mtime, size))
        total += size
    new_cp = str(picked[-1][1]) if picked else checkpoint
    return picked, new_cp


def validate_avro_files(files: list[SourceFile], required_fields: list[str]) -> list[dict]:
    """Read every file through fastavro before Spark touches the table: a corrupt or truncated
    file, or one whose schema lacks a required field, fails the round with its name, and nothing
    is written. Returns the distinct writer schemas seen."""
    import fastavro  # an install requirement of hudi-cdc

    schemas: dict[str, dict] = {}
    for path, _, _ in files:
        try:
            data = storage.read_bytes(path)
            if data is None:
                raise FileNotFoundError(f"{path} is gone")
            with io.BytesIO(data) as fh:
                reader = fastavro.reader(fh)
                schema = reader.writer_schema
                for _ in reader:
                    pass
        except Exception as exc:  # fastavro raises many types for corrupt input
            raise JobInputError(f"corrupt or truncated Avro file {path}: {first_line(exc)}") from None
        if not isinstance(schema, dict):
            raise JobInputError(f"the writer schema of {path} is not an Avro record")
        names = {f["name"] for f in schema.get("fields", [])}
        for f in required_fields:
            if f not in names:
                raise JobInputError(f"field {f!r} (record key/ordering) is missing from the schema of {path}")
        schemas[json.dumps(schema, sort_keys=True)] = schema
    return list(schemas.values())
