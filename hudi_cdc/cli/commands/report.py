"""`hudi-cdc report`: a static HTML page with charts per table (no JVM, no server)."""

from __future__ import annotations

import click

from hudi_cdc.cli.commands import pipeline_from
from hudi_cdc.cli.output import emit, output_option, progress


@click.command("report")
@click.option("--out", "out_dir", default="hudi-cdc-report", show_default=True, metavar="DIR",
              help="folder for index.html")
@click.option("--table", default=None, help="one table of the pipeline file (default: every table)")
@click.option("--path", "paths", multiple=True, metavar="URI",
              help="a table base path instead of the pipeline's tables (repeatable; no pipeline file needed)")
@output_option
@click.pass_context
def report_cmd(ctx, out_dir, table, paths, output):
    """Commits with records inserted/updated/deleted, freshness, file sizes, MoR log growth and compactions."""
    from hudi_cdc.report import pipeline_report

    pipeline = pipeline_from(ctx) if table or not paths else None
    page, tables = pipeline_report(pipeline, out_dir, table, list(paths))
    for r in tables:
        if r.error:
            progress(f"report: {r.label}: {r.error}")
    progress(f"report: wrote {page}")
    emit([{"table": r.label, "table_type": r.table_type, **r.totals(), "error": r.error} for r in tables],
         output, ["table", "table_type", "commits", "inserted", "updated", "deleted", "compactions", "files",
                  "total_bytes", "error"])
