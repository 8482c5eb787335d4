"""The native engine: hudi-rs (the `hudi` package), no JVM.

Time travel and snapshot reads, read-optimized reads of MoR tables and incremental reads of
what was upserted. What it cannot do: full Spark SQL in --where (see filters.parse_where), and,
like Spark's incremental query, it returns no row for a hard-deleted record.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from hudi_cdc.common import s3
from hudi_cdc.common.causes import first_line
from hudi_cdc.errors import TableStateError
from hudi_cdc.lake import slice_merge
from hudi_cdc.query.filters import Condition, check_columns, matches, parse_where, partition_filters
from hudi_cdc.query.timeline import QueryTable

RO_OPTION = "hoodie.read.use.read_optimized.mode"


def _hudi():
    try:
        import hudi
    except ImportError as exc:  # pragma: no cover
        raise TableStateError(f"the hudi package (hudi-rs) is needed for --engine native: {exc}") from None
    return hudi


class NativeEngine:
    name = "native"

    def _read(self, qt: QueryTable, options, conditions: Sequence[Condition],
              where: str | None) -> list[dict[str, Any]]:
        import pyarrow as pa

        _hudi()  # a clear error when hudi-rs is missing
        conds = list(conditions) + (parse_where(where) if where else [])
        pruning = partition_filters(conds, qt.partition_fields)
        if pruning:
            options = options.with_filters(pruning)
        try:
            table = s3.hudi_table_builder(qt.read_uri).build()
            schema = table.get_schema_with_meta_fields()
            try:
                batches = table.read(options)
            except Exception as exc:  # a MoR delete block hudi-rs refuses: those slices are merged here
                if not slice_merge.is_mixed_ordering_error(exc):
                    raise
                batches = slice_merge.read_table(table, options).to_batches()
        except Exception as exc:
            if type(exc).__name__ in ("HudiCoreError", "OSError", "ValueError", "RuntimeError"):
                raise TableStateError(f"{qt.uri}: hudi-rs: {first_line(exc)}") from None
            raise
        check_columns(conds, schema.names)
        if not batches:
            return []
        rows = pa.Table.from_batches(batches).to_pylist()
        return [r for r in rows if matches(r, conds)] if conds else rows

    def as_of(self, qt: QueryTable, instant: str, *, conditions: Sequence[Condition] = (),
              where: str | None = None, read_optimized: bool = False) -> list[dict[str, Any]]:
        hudi = _hudi()
        options = hudi.HudiReadOptions().with_as_of_timestamp(instant)
        if read_optimized:
            options = options.with_hudi_option(RO_OPTION, "true")
        return self._read(qt, options, conditions, where)

    def incremental(self, qt: QueryTable, begin: str, end: str, *, conditions: Sequence[Condition] = (),
                    where: str | None = None) -> list[dict[str, Any]]:
        """Records upserted by the commits that completed in (begin, end]."""
        hudi = _hudi()
        options = (hudi.HudiReadOptions().with_query_type(hudi.HudiQueryType.Incremental)
                   .with_start_timestamp(begin).with_end_timestamp(end))
        return self._read(qt, options, conditions, where)
