"""The library under `hudi-cdc query`, for scripts and notebooks.

    from hudi_cdc.query import as_of, history, changes
    as_of("s3://bucket/moma/artists_mor", "2021-12-30T09:00:00-05:00", spark=spark, where="artist_id = 299")
    history("/lake/artists_mor", "299")                   # no SparkSession: hudi-rs, no JVM
    changes("/lake/artists_cow", since="20211230132628", spark=spark)

`table` is a base path (local, file:// or s3://) or an open QueryTable; pass `spark` (an existing
SparkSession) to read through Hudi's Spark datasource, or engine="native" for hudi-rs. Times are
Hudi instants, ISO times (UTC unless a zone is given) or dates. Results are plain data; the
`*_dataframe` functions give Spark DataFrames instead.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from hudi_cdc.errors import ConfigError
from hudi_cdc.lake.metadata import write_totals
from hudi_cdc.query import spark_engine
from hudi_cdc.query.filters import key_conditions
from hudi_cdc.query.history import record_history, truncated_at
from hudi_cdc.query.native_engine import NativeEngine
from hudi_cdc.query.rows import shape
from hudi_cdc.query.timeline import Commit, QueryTable, Range, open_query_table

TableLike = str | QueryTable


@dataclass
class AsOf:
    at: str  # the time asked for, as typed
    commit: Commit  # the last commit visible at that time
    committed_at: str | None  # its wall-clock completion time (UTC)
    rows: list[dict[str, Any]]
    engine: str
    read_optimized: bool = False


@dataclass
class History:
    key: str
    states: list[dict[str, Any]]  # oldest first
    engine: str
    warnings: list[str] = field(default_factory=list)


@dataclass
class Changes:
    range: Range
    rows: list[dict[str, Any]]  # the latest version of every record upserted in the range
    commits: list[dict[str, Any]]  # each commit of the range, with its metadata's counts
    engine: str

    @property
    def totals(self) -> dict[str, int]:
        keys = ("inserts", "updates", "deletes")
        return {k: sum(int(c.get(k) or 0) for c in self.commits) for k in keys}


def table_for(table: TableLike) -> QueryTable:
    return table if isinstance(table, QueryTable) else open_query_table(str(table))


def engine_for(engine: str | None = None, spark=None):
    """`spark` when a SparkSession is given (or asked for: then one is needed), else native."""
    name = engine or ("spark" if spark is not None else "native")
    if name == "native":
        return NativeEngine()
    if name == "spark":
        if spark is None:
            raise ConfigError("engine 'spark' needs a SparkSession (pass spark=...)")
        return spark_engine.SparkEngine(spark)
    raise ConfigError(f"unknown engine {name!r}: use spark or native")


def as_of(table: TableLike, at: str, *, spark=None, engine: str | None = None, where: str | None = None,
          read_optimized: bool = False, columns: Sequence[str] | None = None) -> AsOf:
    """The table as it was at `at`: every commit completed by then, and none after."""
    qt = table_for(table)
    eng = engine_for(engine, spark)
    commit = qt.commit_at(at)
    rows = eng.as_of(qt, commit.requested_time, where=where, read_optimized=read_optimized)
    return AsOf(at, commit, qt.wall_clock(commit.completion_time), shape(qt, rows, columns), eng.name, read_optimized)


def history(table: TableLike, key: str, *, spark=None, engine: str | None = None,
            columns: Sequence[str] | None = None) -> History:
    """Every state of the record with this key, one per commit that touched it, the delete included."""
    qt = table_for(table)
    eng = engine_for(engine, spark)
    conditions = key_conditions(str(key), qt.record_keys, qt.column_types)
    states = record_history(eng, qt, conditions, columns)
    warnings = []
    if qt.cleaned:
        warnings.append("the cleaner has run on this table: states older than the retained commits "
                        "(hoodie.clean.commits.retained) may be missing")
    return History(str(key), states, eng.name, warnings)


def _commit_summary(qt: QueryTable, commit: Commit, meta: dict) -> dict[str, Any]:
    totals = write_totals(meta)
    return {"instant": commit.requested_time, "committed_at": qt.wall_clock(commit.completion_time),
            "action": commit.action, "operation": str(meta.get("operationType") or "").lower() or None,
            "inserts": totals["inserted"], "updates": totals["updated"], "deletes": totals["deleted"],
            "truncated_at": truncated_at(meta)}


def changes(table: TableLike, since: str, until: str | None = None, *, spark=None, engine: str | None = None,
            where: str | None = None, columns: Sequence[str] | None = None) -> Changes:
    """What the commits that completed after `since` and by `until` (default: now) upserted, with
    each commit's counts from its metadata. Hard-deleted records have no row (counted in deletes)."""
    qt = table_for(table)
    eng = engine_for(engine, spark)
    rng = qt.range(since, until)
    writes = [c for c in rng.commits if not c.rewrites_only]
    meta = qt.metadata(writes)
    summary = [_commit_summary(qt, c, meta[c.requested_time]) for c in writes]
    rows = eng.incremental(qt, rng.begin, rng.end, where=where) if writes else []
    return Changes(rng, shape(qt, rows, columns), summary, eng.name)


def as_of_dataframe(spark, table: TableLike, at: str, *, read_optimized: bool = False, where: str | None = None):
    """A Spark DataFrame of the table as it was at `at` (the time resolved as in as_of)."""
    qt = table_for(table)
    commit = qt.commit_at(at)
    return spark_engine.as_of_df(spark, qt.read_uri, commit.requested_time, read_optimized=read_optimized, where=where)


def changes_dataframe(spark, table: TableLike, since: str, until: str | None = None, *, where: str | None = None):
    """A Spark DataFrame of what changed after `since` up to `until` (incremental query)."""
    qt = table_for(table)
    rng = qt.range(since, until)
    return spark_engine.incremental_df(spark, qt.read_uri, rng.begin, rng.end, where=where)
