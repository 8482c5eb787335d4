"""The table version on disk against the pipeline's (hudi.table_version): writers never upgrade or
downgrade a table (hoodie.write.auto.upgrade=false), so a table at another version is refused before
any job starts, naming both; `hudi-cdc table downgrade` converts it (lake/downgrade.py)."""

from __future__ import annotations

from hudi_cdc.common import storage
from hudi_cdc.common.properties import parse_properties
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import TableStateError


def version_on_disk(base_uri: str) -> int | None:
    """hoodie.table.version of the table at base_uri; None when there is no table (or no version key)."""
    uri = storage.normalize(str(base_uri))
    for name in ("hoodie.properties", "hoodie.properties.backup"):
        raw = storage.read_bytes(storage.join(uri, ".hoodie", name))
        if raw is not None:
            found = parse_properties(raw.decode("utf-8", errors="replace")).get("hoodie.table.version", "")
            return int(found) if found.strip().isdigit() else None
    return None


def mismatch(pipeline: Pipeline, table: str, table_type: str, found: int | None = -1) -> str | None:
    """One line when the table on disk is at another version than the pipeline writes, else None
    (`found`: the version on disk when the caller read it already)."""
    base = pipeline.base_path(table, table_type)
    found = version_on_disk(base) if found == -1 else found
    wanted = pipeline.hudi.writes_table_version
    if found is None or found == wanted:
        return None
    hint = (f"`hudi-cdc table downgrade --table {table}` converts it" if found > wanted
            else f"set hudi.table_version: {found} to keep writing it")
    return (f"table {table} ({table_type}) at {base} is Hudi table version {found}, but {pipeline.source_file} "
            f"says hudi.table_version {wanted}; writes never change a table's version: {hint}")


def check_version(pipeline: Pipeline, table: str, table_type: str) -> None:
    line = mismatch(pipeline, table, table_type)
    if line:
        raise TableStateError(line)
