"""Read what the pipeline wrote with hudi-rs (the `hudi` package): no JVM, an independent reader."""

from __future__ import annotations

from collections.abc import Sequence

from hudi_cdc.common import s3
from hudi_cdc.common.causes import first_line
from hudi_cdc.config import Pipeline
from hudi_cdc.errors import TableStateError
from hudi_cdc.lake import slice_merge


def read_table(base_uri: str, columns: Sequence[str] | None = None, read_optimized: bool = False) -> list[dict]:
    t = read_arrow(base_uri, read_optimized)
    if t is None:
        return []
    if columns:
        t = t.select([c for c in columns if c in t.column_names])
    return t.to_pylist()


def read_arrow(base_uri: str, read_optimized: bool = False):
    """The table as one pyarrow Table (None when it holds no rows): typed values of any range (BC dates
    included, which Python's datetime cannot hold) stay readable."""
    try:
        import hudi  # noqa: F401
        import pyarrow as pa
    except ImportError as exc:  # pragma: no cover
        raise TableStateError(f"the hudi package (hudi-rs) is needed to read tables: {exc}") from None
    try:
        builder = s3.hudi_table_builder(base_uri)
        if read_optimized:
            builder = builder.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
        table = builder.build()
        try:
            batches = table.read()
        except Exception as exc:  # a MoR delete block hudi-rs refuses: those slices are merged here
            if not slice_merge.is_mixed_ordering_error(exc):
                raise
            batches = slice_merge.read_table(table).to_batches()
    except Exception as exc:
        raise TableStateError(f"cannot read Hudi table at {base_uri}: {first_line(exc)}") from None
    if not batches:
        return None
    return pa.Table.from_batches(batches)


def current_rows(pipeline: Pipeline, table: str, table_type: str, keys: Sequence[str] = (),
                 columns: Sequence[str] | None = None) -> list[dict]:
    t = pipeline.table(table)
    rows = read_table(pipeline.base_path(table, table_type))
    key = t.record_keys[0]
    if keys:
        wanted = {str(k) for k in keys}
        rows = [r for r in rows if str(r.get(key)) in wanted]
    rows.sort(key=lambda r: (r.get(key) is None, r.get(key)))
    if columns:
        rows = [{c: r.get(c) for c in columns} for r in rows]
    return rows


def rows_by_key(rows: list[dict], key: str, drop_meta: bool = True) -> dict[object, dict]:
    out = {}
    for r in rows:
        rec = {k: v for k, v in r.items() if not (drop_meta and k.startswith("_hoodie_"))}
        out[r[key]] = rec
    return out
