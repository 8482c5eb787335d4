"""`hudi-cdc report`: a static HTML page with charts per table (commits and their records, freshness,
file sizes, MoR log growth and compactions), from the same timeline data as `inspect` and `status`."""

from __future__ import annotations

from pathlib import Path

from hudi_cdc.config import TYPE_SUFFIX, Pipeline
from hudi_cdc.report.data import TableReport, table_report
from hudi_cdc.report.page import render_page, write_report

__all__ = ["TableReport", "pipeline_report", "render_page", "table_report", "write_report"]


def _label(path: str, taken: set[str]) -> str:
    """A table path's folder name, with its parent's when another table already has that name."""
    p = Path(path.rstrip("/"))
    return p.name if p.name and p.name not in taken else f"{p.parent.name}/{p.name}"


def pipeline_report(pipeline: Pipeline | None, out_dir: str | Path, table: str | None = None,
                    paths: list[str] | None = None) -> tuple[Path, list[TableReport]]:
    """The pipeline's tables (or one of them) and any table paths given, written as one page."""
    tables = []
    if pipeline is not None:
        for name, tt in pipeline.targets(table):
            tables.append(table_report(f"{name}_{TYPE_SUFFIX[tt]}", pipeline.base_path(name, tt),
                                       pipeline.topic_dir(name)))
    for p in paths or []:
        tables.append(table_report(_label(str(p), {t.label for t in tables}), str(p)))
    title = f"hudi-cdc report: {pipeline.pipeline}" if pipeline is not None else "hudi-cdc report"
    return write_report(tables, out_dir, title), tables
