"""The source schema HoodieDeltaStreamer 0.14 reads a table's files with, across schema changes.

FilebasedSchemaProvider gives one schema for every file of a round, and the table's schema follows
it. The newest landed file's schema alone would drop a column the source dropped or renamed (Hudi
0.14 then refuses the write: the incoming schema lacks a table column) and could not read older
files' columns. So the newest schema is extended with every field an older landed file carried and
the newest lacks, as an optional field (null default): old files keep their values, newer files
read it as null, the lake keeps the column (what hudi-cdc's streamer does; docs/schema-changes.md).
Only file headers are read."""

from __future__ import annotations

import copy
import io
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import fastavro

from hudi_cdc.common import storage


def _optional(field: dict[str, Any]) -> dict[str, Any]:
    f = copy.deepcopy(field)
    t = f["type"]
    if not (isinstance(t, list) and "null" in t):
        f["type"] = ["null", *(t if isinstance(t, list) else [t])]
    elif t[0] != "null":
        f["type"] = ["null", *[x for x in t if x != "null"]]
    f["default"] = None
    return f


def file_schema(path: str | Path) -> dict[str, Any] | None:
    """The writer schema of one landed file (a local path or an s3:// URI); None when it is unreadable
    or not a record."""
    try:
        data = storage.read_bytes(str(path))
        schema = fastavro.reader(io.BytesIO(data)).writer_schema if data is not None else None
    except (OSError, ValueError):
        return None
    return schema if isinstance(schema, dict) else None


def union_schema(newest: dict[str, Any], files: Sequence[str | Path]) -> dict[str, Any]:
    """`newest` plus the fields of the other files' schemas it lacks (optional, null default)."""
    out = copy.deepcopy(newest)
    names = {f["name"] for f in out["fields"]}
    for path in sorted(files, key=str):
        schema = file_schema(path)
        if schema is None:
            continue  # an unreadable file is named by the job itself
        for f in schema.get("fields", []):
            if f["name"] not in names:
                out["fields"].append(_optional(f))
                names.add(f["name"])
    return out
