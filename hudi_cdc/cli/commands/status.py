"""`hudi-cdc status`: freshness, backlog and compaction state per table (no JVM)."""

from __future__ import annotations

import click

from hudi_cdc.cli.commands import pipeline_from
from hudi_cdc.cli.output import emit, output_option, progress
from hudi_cdc.errors import ExitCode

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
    from hudi_cdc.lake.status import COLUMNS, Bounds, pipeline_status

    rows = pipeline_status(pipeline_from(ctx), table, TYPES.get(ttype), Bounds(max_freshness, max_backlog_files))
    as_json = output == "json"
    emit([r.as_dict() if as_json else r.text_row() for r in rows], output, None if as_json else list(COLUMNS))
    problems = [b for r in rows for b in r.breaches]
    _slot_line(ctx)
    _consistent_line(ctx)
    for line in problems:
        progress(f"status: {line}")
    if problems:
        ctx.exit(ExitCode.FAILED)


def _slot_line(ctx) -> None:
    """The pipeline's replication slot (retained WAL, lag), when it captures a database: a note on stderr."""
    from hudi_cdc.errors import HudiCdcError
    from hudi_cdc.sources.postgres.heartbeat import pipeline_slot

    try:
        slot = pipeline_slot(pipeline_from(ctx))
    except HudiCdcError as exc:  # database down, password unset: the tables' status stands
        progress(f"status: source slot unknown: {exc}")
        return
    if slot is not None:
        progress(f"status: {slot.line()}")


def _consistent_line(ctx) -> None:
    """The pipeline's consistent point per table type (capture's transaction cuts): a note on stderr."""
    from hudi_cdc.errors import HudiCdcError
    from hudi_cdc.query.consistent import consistent_point

    pipeline = pipeline_from(ctx)
    for tt in sorted({tt for _, tt in pipeline.targets()}):
        try:
            point = consistent_point(pipeline, tt)
        except HudiCdcError as exc:
            progress(f"status: consistent point ({tt}) unknown: {exc}")
            continue
        if point is not None:
            progress(f"status: {tt} tables consistent through LSN {point.lsn} (transaction cut {point.cut} "
                     f"of {point.newest_cut})")
