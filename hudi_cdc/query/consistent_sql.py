"""`hudi-cdc query consistent`: the newest consistent point (consistent.py: capture's newest cut every
table committed) and, per table, how to read it in each engine.

- a history table (`history: scd2`, docs/history.md): a plain `WHERE` on the validity range at the
  point's LSN, the same text for Trino, Athena, Hive and Spark (no time travel needed, no cleaner limit);
- a current-state table: Spark's `TIMESTAMP AS OF '<instant>'` (the commit exactly at the cut) and
  hudi-cdc's own `query as-of` (hudi-rs, no JVM); Trino and Athena have no Hudi time travel.

The history table is written before the current-state commit of the same round, so a table at the cut
has every version up to it; versions after the cut are outside the range.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from hudi_cdc.config import TYPE_SUFFIX, Pipeline, history_name
from hudi_cdc.errors import TableStateError
from hudi_cdc.jobs.stream import cuts
from hudi_cdc.jobs.stream.history import FROM_LSN, FROM_PREV, TO_LSN, TO_PREV
from hudi_cdc.query.consistent import ConsistentPoint, consistent_point

ENGINES = ("trino", "athena", "hive", "spark")
TRINO_CATALOG = "hudi"  # the local stack's Hudi catalog (stack/trino.py)


@dataclass
class TableQuery:
    table: str  # the pipeline table
    kind: str  # "history" | "current"
    hive_table: str  # <db>.<table> as Hive sync names it (MoR: the snapshot table, _rt)
    base_path: str
    instant: str | None  # current-state: the commit exactly at the cut (None: empty there)
    sql: dict[str, str] = field(default_factory=dict)  # engine -> statement


@dataclass
class ConsistentSql:
    table_type: str
    cut: int
    lsn: str
    ts_ms: int
    newest_cut: int
    tables: list[TableQuery] = field(default_factory=list)

    def as_dict(self) -> dict:
        return asdict(self)


def validity_where(lsn: int | str) -> str:
    """The rows of a history table valid at the cut at commit LSN `lsn`: every engine's SQL. A version
    is in the cut when its opening transaction committed at or before it, i.e. the last commit before
    that transaction is below it (jobs/stream/history.py), and its ending one did not; a version written
    without those columns falls back to its LSN range (LSN - 1: the same test)."""
    x = int(lsn)
    return (f"coalesce({FROM_PREV}, {FROM_LSN} - 1) < {x} AND "
            f"({TO_LSN} IS NULL OR coalesce({TO_PREV}, {TO_LSN} - 1) >= {x})")


def _hive_name(pipeline: Pipeline, table: str, table_type: str) -> tuple[str, str]:
    """(database, table) of the snapshot read Hive sync registers: CoW `<t>`, MoR `<t>_rt`."""
    return pipeline.hive_db(table_type), table + ("_rt" if table_type == "MERGE_ON_READ" else "")


def history_query(pipeline: Pipeline, table: str, table_type: str, lsn: str) -> TableQuery:
    db, name = _hive_name(pipeline, history_name(table), table_type)
    where = validity_where(lsn)
    # Trino's Hudi connector reads a MoR table's _rt as read-optimized (docs/trino.md): its _ro, named so
    trino_name = history_name(table) + ("_ro" if table_type == "MERGE_ON_READ" else "")
    sql = {"trino": f'SELECT * FROM {TRINO_CATALOG}."{db}"."{trino_name}" WHERE {where}',
           "athena": f'SELECT * FROM "{db}"."{name}" WHERE {where}',
           "hive": f"SELECT * FROM `{db}`.`{name}` WHERE {where}",
           "spark": f"SELECT * FROM `{db}`.`{name}` WHERE {where}"}
    return TableQuery(history_name(table), "history", f"{db}.{name}", pipeline.history_base_path(table, table_type),
                      None, sql)


def current_query(pipeline: Pipeline, table: str, table_type: str, instant: str | None, base_path: str) -> TableQuery:
    db, name = _hive_name(pipeline, table, table_type)
    sql: dict[str, str] = {}
    if instant is not None:
        sql["spark"] = f"SELECT * FROM `{db}`.`{name}` TIMESTAMP AS OF '{instant}'"
        sql["hudi-cdc"] = (f"hudi-cdc query as-of --table {table} --type {TYPE_SUFFIX[table_type]} --at {instant} "
                           "--engine native")
    return TableQuery(table, "current", f"{db}.{name}", base_path, instant, sql)


def consistent_sql(pipeline: Pipeline, table_type: str, cut: int | None = None) -> ConsistentSql:
    """The newest consistent point (or `cut`) of `table_type`'s tables, with each table's SQL."""
    point: ConsistentPoint | None = consistent_point(pipeline, table_type, cut)
    if point is None:
        what = f"cut {cut}" if cut is not None else "a transaction cut"
        raise TableStateError(f"no consistent point: not every {table_type} table has committed {what} yet "
                              f"(capture writes cuts under {cuts.cuts_dir(pipeline.source_root)}; run stream)")
    out = ConsistentSql(table_type, point.cut, point.lsn, point.ts_ms, point.newest_cut)
    for name, at in point.tables.items():
        out.tables.append(current_query(pipeline, name, table_type, at.instant, at.base_path))
        if pipeline.table(name).history:
            out.tables.append(history_query(pipeline, name, table_type, point.lsn))
    return out
