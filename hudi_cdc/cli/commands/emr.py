"""`hudi-cdc emr status|logs|cancel`: look after steps (EMR) and job runs (EMR Serverless).

`--target emr-serverless` (on the main command) switches from EMR steps to EMR Serverless job runs;
any other target means EMR steps on emr.cluster_id.
"""

from __future__ import annotations

import click

from hudi_cdc.cli.commands import pipeline_from
from hudi_cdc.cli.output import emit, output_option, progress


def _runner(ctx: click.Context, dry_run: bool = False):
    from hudi_cdc.runners import make_runner

    target = ctx.find_root().obj.get("target")
    return make_runner(pipeline_from(ctx), "emr-serverless" if target == "emr-serverless" else "emr",
                       progress=progress, dry_run=dry_run, show=click.echo)


@click.group()
def emr():
    """Status, logs and cancel for submitted EMR steps and EMR Serverless job runs."""


@emr.command("status")
@click.argument("run_id", required=False)
@output_option
@click.pass_context
def status_cmd(ctx, run_id, output):
    """State of one step/job run, or of all this pipeline's steps/job runs."""
    emit(_runner(ctx).status(run_id), output, ["id", "name", "state", "created", "reason"])


@emr.command("logs")
@click.argument("run_id")
@click.option("--stdout", "kind", flag_value="stdout", help="stdout instead of stderr")
@click.option("--stderr", "kind", flag_value="stderr", default=True, help="stderr (default)")
@click.option("--lines", "-n", default=200, show_default=True, help="how many lines from the end")
@click.pass_context
def logs_cmd(ctx, run_id, kind, lines):
    """Tail of a step's (driver's) stderr or stdout, read from the log URI on S3."""
    click.echo(_runner(ctx).logs(run_id, kind, lines))


@emr.command("cancel")
@click.argument("run_id")
@click.option("--dry-run", is_flag=True, help="print the AWS call instead of making it")
@click.pass_context
def cancel_cmd(ctx, run_id, dry_run):
    """Cancel a step (SEND_INTERRUPT) or a job run."""
    _runner(ctx, dry_run=dry_run).cancel(run_id)
