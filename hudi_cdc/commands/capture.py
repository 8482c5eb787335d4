"""capture and verify: the source database side of a pipeline (each a few lines over the library)."""

from __future__ import annotations

import click

from ..output import emit, output_option, progress
from . import pipeline_from

TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


@click.command("capture")
@click.option("--once", is_flag=True, required=True,
              help="snapshot if none yet, then every change committed so far, then exit "
                   "(continuous capture is not built yet)")
@click.option("--flush-size", type=click.IntRange(min=1), default=None,
              help="records per landed file (default: source.database.flush_size)")
@click.option("--timeout", "timeout", type=float, default=None, help="give up after this many seconds")
@output_option
@click.pass_context
def capture_cmd(ctx, once, flush_size, timeout, output):
    """Land the database's changes as Kafka Connect S3-sink Avro files under source.root (Debezium)."""
    from ..capture.capture import capture_once

    result = capture_once(pipeline_from(ctx), progress=progress, flush_size=flush_size, timeout_seconds=timeout)
    if output == "json":
        emit(result.to_dict(), "json")
    else:
        progress(f"captured {result.events} events into {result.files} file(s) in {result.seconds} s "
                 f"({result.events_per_second} events/s)")


@click.command("verify")
@click.option("--table", required=True, help="the table to compare with its source table")
@click.option("--type", "ttype", type=click.Choice(sorted(TYPES)), default="cow", show_default=True)
@output_option
@click.pass_context
def verify_cmd(ctx, table, ttype, output):
    """Compare a Hudi table with its database table by keys and row hashes; exit 10 when they differ."""
    from ..capture.verify import TablesDiffer, verify

    result = verify(pipeline_from(ctx), table, TYPES[ttype])
    if output == "json":
        emit(result.to_dict(), "json")
    elif result.equal:
        click.echo(result.summary())
    if not result.equal:
        raise TablesDiffer(result.summary())
