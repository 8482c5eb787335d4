"""A set of tables as of one consistent point: capture's newest transaction cut every table committed.

Capture writes a cut at a transaction boundary, naming each topic's newest landed file
(jobs/stream/cuts.py); the streamer ends each round on a cut's file and records, in the commit's
extra metadata, the newest file it consumed (checkpoints.CUT_KEY, LAST_FILE_KEY). So table T is
*exactly at* cut C in the commit whose last file is the file C names for T's topic (a table with no
change since an earlier cut names the same file: the same commit serves both), and *empty* at C when
C names no file for it yet. The consistent point of a pipeline (and table type) is the newest cut at
which every table is exactly at some commit; reading each table as of that commit gives the source's
state after the same transactions, all tables alike. No JVM: the timeline and commit metadata
through hudi-rs; rows through hudi-rs (native) or Spark.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from hudi_cdc.common import checkpoints, storage
from hudi_cdc.config import Pipeline
from hudi_cdc.config.topic import kafka_topic
from hudi_cdc.errors import TableStateError
from hudi_cdc.jobs.stream import cuts


@dataclass
class TableAt:
    table: str
    base_path: str
    instant: str | None  # the commit (requested time) exactly at the cut; None: the table is empty there
    last_file: str | None


@dataclass
class ConsistentPoint:
    table_type: str
    cut: int
    lsn: str  # every table holds exactly the source's transactions committed up to this LSN
    ts_ms: int  # when capture cut
    tables: dict[str, TableAt] = field(default_factory=dict)
    newest_cut: int = 0  # the newest cut capture wrote (the point lags it while tables catch up)

    def as_dict(self) -> dict:
        return asdict(self)


def _commits_by_last_file(base_path: str) -> dict[str, str]:
    """{newest landed file a commit consumed: the newest completed commit that consumed it}."""
    from hudi_cdc.lake.metadata import commit_metadata
    from hudi_cdc.lake.table import open_table
    from hudi_cdc.lake.timeline import completed_writes, read_timeline

    if not storage.exists(storage.join(storage.local(base_path), ".hoodie", "hoodie.properties")):
        return {}
    table = open_table(base_path)
    writes = completed_writes(read_timeline(table))
    out: dict[str, str] = {}
    for inst, meta in zip(writes, commit_metadata(table, writes), strict=True):
        pos = checkpoints.cut_position(checkpoints.extra_metadata(meta))
        if pos is not None:
            out[pos.last_file] = inst.requested_time  # oldest first: the newest wins
    return out


def consistent_point(pipeline: Pipeline, table_type: str, cut: int | None = None) -> ConsistentPoint | None:
    """The newest cut (or the cut asked for) at which every table of `table_type` is exactly at a
    commit; None when capture wrote no cut yet or no cut is committed by every table."""
    folder = cuts.cuts_dir(pipeline.source_root)
    numbers = cuts.cut_numbers(folder)
    if not numbers:
        return None
    if cut is not None and cut not in numbers:
        raise TableStateError(f"cut {cut} is not in {folder} (cuts {numbers[0]}..{numbers[-1]})")
    names = [name for name, tt in pipeline.targets() if tt == table_type]
    routed = [name for name in names if pipeline.table(name).route]
    if routed:
        raise TableStateError(f"tables.{routed[0]} is routed from several source tables: a consistent point "
                              "across routed tables is not built yet (read it without --consistent)")
    topics = {name: kafka_topic(pipeline.table(name).topic) for name in names}  # as the cuts name them
    commits = {name: _commits_by_last_file(pipeline.base_path(name, table_type)) for name in names}
    for n in reversed(numbers):
        if cut is not None and n != cut:
            continue
        c = cuts.read_cut(folder, n)
        if c is None:
            continue
        point = ConsistentPoint(table_type, n, str(c.get("lsn", "")), int(c.get("ts_ms") or 0),
                                newest_cut=numbers[-1])
        for name in names:
            want = c["topics"].get(topics[name])
            instant = commits[name].get(want) if want else None
            if want and instant is None:
                break  # this table has not committed exactly this cut
            point.tables[name] = TableAt(name, pipeline.base_path(name, table_type), instant, want)
        else:
            return point
        if cut is not None:
            return None
    return None


def read_consistent(pipeline: Pipeline, table_type: str, cut: int | None = None, *, spark=None,
                    engine: str | None = None, where: Callable[[str], str | None] | None = None,
                    ) -> tuple[ConsistentPoint, dict[str, list[dict[str, Any]]]]:
    """Every table of `table_type` as of the consistent point (or cut): (the point, {table: rows})."""
    from hudi_cdc.query.api import engine_for, table_for

    point = consistent_point(pipeline, table_type, cut)
    if point is None:
        what = f"cut {cut}" if cut is not None else "a transaction cut"
        raise TableStateError(f"no consistent point: not every {table_type} table has committed {what} yet "
                              f"(capture writes cuts under {cuts.cuts_dir(pipeline.source_root)}; run stream)")
    eng = engine_for(engine, spark)
    rows: dict[str, list[dict[str, Any]]] = {}
    for name, at in point.tables.items():
        if at.instant is None:
            rows[name] = []
            continue
        rows[name] = eng.as_of(table_for(at.base_path), at.instant, where=where(name) if where else None)
    return point, rows
