"""`hudi-cdc status`: freshness, backlog and compaction state per table (no JVM)."""

from __future__ import annotations

import click

from ..errors import ExitCode
from ..output import emit, output_option, progress
from . import pipeline_from

TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


@click.command("status")
@click.option("--table", default=None, help="one table (default: every table)")
@click.option("--type", "ttype", type=click.Choice(sorted(TYPES)), default=None, help="one table type")
@click.option("--max-freshness", type=float, default=None, metavar="SECONDS",
              help="exit 1 when a table's newest applied source event is older than this")
@click.option("--max-backlog-files", type=int, default=None, metavar="N",
              help="exit 1 when more than N landed files wait for a table")
@output_option
@click.pass_context
def status_cmd(ctx, table, ttype, max_freshness, max_backlog_files, output):
    """Per table and type: last commit, freshness, landing backlog, MoR compaction, small files, failures,
    and the writer holding the table (pid, host, command, age) if one does."""
    from ..status import COLUMNS, Bounds, pipeline_status

    rows = pipeline_status(pipeline_from(ctx), table, TYPES.get(ttype), Bounds(max_freshness, max_backlog_files))
    as_json = output == "json"
    emit([r.as_dict() if as_json else r.text_row() for r in rows], output, None if as_json else list(COLUMNS))
    problems = [b for r in rows for b in r.breaches]
    for line in problems:
        progress(f"status: {line}")
    if problems:
        ctx.exit(ExitCode.FAILED)
