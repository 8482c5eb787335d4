"""Where a table's value schema comes from: an .avsc file, or the newest landed Avro file."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from hudi_cdc.common.lake_types import OLDKEY_PREFIX, SOURCE_VALUES_COLUMN
from hudi_cdc.errors import DataError


def schema_from_avsc(path: str | Path) -> dict[str, Any]:
    p = Path(path)
    try:
        schema = json.loads(p.read_text())
    except OSError as exc:
        raise DataError(f"{p}: cannot read ({exc.strerror})") from None
    except ValueError as exc:
        raise DataError(f"{p}: not JSON ({exc})") from None
    _parse_avro(schema, str(p))
    return schema


def _parse_avro(schema: Any, where: str) -> None:
    import fastavro

    try:
        fastavro.parse_schema(schema)
    except Exception as exc:  # noqa: BLE001 - fastavro raises several types
        raise DataError(f"{where}: not a valid Avro schema ({exc})") from None


def landed_files(pipeline, table: str) -> list[Path]:
    from hudi_cdc.config import uri_to_path

    d = uri_to_path(pipeline.topic_dir(table))
    if not d.is_dir():
        raise DataError(f"no landed files for table {table!r}: {d} does not exist "
                        "(hudi-cdc sample lands the MoMA sample)")
    files = sorted(p for p in d.iterdir() if p.suffix == ".avro" and p.is_file())
    if not files:
        raise DataError(f"no .avro files in {d} for table {table!r}")
    return files


def schema_from_landed(pipeline, table: str) -> dict[str, Any]:
    """The writer schema of the newest landed Avro file of a table (what the S3 sink wrote with)."""
    import fastavro

    files = landed_files(pipeline, table)
    newest = max(files, key=_offset_key)
    try:
        with open(newest, "rb") as fh:
            r = fastavro.reader(fh)
            raw = r.metadata.get("avro.schema")
            # the schema text exactly as the sink wrote it (writer_schema is fastavro's parsed form,
            # with names folded into full names)
            schema = json.loads(raw) if raw else r.writer_schema
    except Exception as exc:  # noqa: BLE001
        raise DataError(f"{newest}: not a readable Avro container file ({exc})") from None
    if not isinstance(schema, dict):
        raise DataError(f"{newest}: the writer schema is not an Avro record")
    # a key change's old key (capture/oldkey.py) rides along some events only: not the table's shape
    fields = [f for f in schema.get("fields", []) if not str(f.get("name", "")).startswith(OLDKEY_PREFIX)
              and f.get("name") != SOURCE_VALUES_COLUMN]  # as capture's special values (capture/specials.py)
    return {**schema, "fields": fields} if "fields" in schema else schema


def _offset_key(p: Path) -> tuple[int, str]:
    """<topic>+<partition>+<offset>.avro sorts by offset; anything else by name."""
    m = re.search(r"\+(\d+)\.avro$", p.name)
    return (int(m.group(1)) if m else -1, p.name)
