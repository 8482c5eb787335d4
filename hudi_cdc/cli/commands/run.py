"""run: a whole pipeline under one supervisor (capture when the pipeline has a database, and stream --all)."""

from __future__ import annotations

import click

from hudi_cdc.cli import views
from hudi_cdc.cli.commands import pipeline_from, target_of
from hudi_cdc.cli.output import emit, output_option, progress, render


@click.command("run")
@click.option("--flush-size", type=click.IntRange(min=1), default=None,
              help="capture: records per landed file (default: source.database.flush_size)")
@click.option("--rotate-seconds", type=click.FloatRange(min=0.5), default=60.0, show_default=True,
              help="capture: close a file open this long (the sink's rotate.schedule.interval.ms)")
@click.option("--dry-run", is_flag=True, help="print what would run")
@output_option
@click.pass_context
def run_cmd(ctx, flush_size, rotate_seconds, dry_run, output):
    """Capture (when the pipeline has a database) and stream every table, until SIGTERM or Ctrl-C."""
    from hudi_cdc.pipeline.run import run_pipeline

    if target_of(ctx) != "local":
        raise click.UsageError("run is local: on EMR submit `stream --all`'s step (docs/stream-all.md)")
    result = run_pipeline(pipeline_from(ctx), progress=progress, flush_size=flush_size, rotate_seconds=rotate_seconds,
                          dry_run=dry_run)
    if output == "json":
        emit(result.to_dict(), "json")
        return
    render(views.stream_all_results(result.stream), output)
    if result.capture:
        c = result.capture
        progress(f"captured {c.get('events')} events into {c.get('files')} file(s) in {c.get('seconds')} s")
