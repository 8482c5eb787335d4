"""`hudi-cdc report`: a static HTML page with charts per table (commits and their records, freshness,
file sizes, MoR log growth and compactions), from the same timeline data as `inspect` and `status`."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from hudi_cdc.config import TYPE_SUFFIX, Pipeline, history_name
from hudi_cdc.lake.status import STATUS_THREADS
from hudi_cdc.report.data import TableReport, table_report
from hudi_cdc.report.page import render_page, write_report

__all__ = ["TableReport", "pipeline_report", "render_page", "table_report", "write_report"]


def _label(path: str, taken: set[str]) -> str:
    """A table path's folder name, with its parent's when another table already has that name."""
    p = Path(path.rstrip("/"))
    return p.name if p.name and p.name not in taken else f"{p.parent.name}/{p.name}"


def pipeline_report(pipeline: Pipeline | None, out_dir: str | Path, table: str | None = None,
                    paths: list[str] | None = None) -> tuple[Path, list[TableReport]]:
    """The pipeline's tables (or one of them) and any table paths given, written as one page; the
    tables read over `status`'s threads (hudi-rs releases the GIL while it reads)."""
    args: list[tuple[str, str, str | None]] = []
    if pipeline is not None:
        for name, tt in pipeline.targets(table):
            args.append((f"{name}_{TYPE_SUFFIX[tt]}", pipeline.base_path(name, tt), pipeline.topic_dir(name)))
            if pipeline.table(name).history:  # its history table right after it: versions opened (inserted)
                args.append((f"{history_name(name)}_{TYPE_SUFFIX[tt]}",  # and ended (updated) per commit
                             pipeline.history_base_path(name, tt), None))
    for p in paths or []:
        args.append((_label(str(p), {a[0] for a in args}), str(p), None))
    with ThreadPoolExecutor(max_workers=max(1, min(STATUS_THREADS, len(args)))) as pool:
        tables = list(pool.map(lambda a: table_report(*a), args))
    title = f"hudi-cdc report: {pipeline.pipeline}" if pipeline is not None else "hudi-cdc report"
    return write_report(tables, out_dir, title), tables
