"""capture, verify, source check, connectors render: the source database side of a pipeline (thin)."""

from __future__ import annotations

import click

from ..output import emit, output_option, progress
from . import pipeline_from

TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


@click.command("capture")
@click.option("--once", is_flag=True,
              help="snapshot if none yet, then every change committed so far, then exit "
                   "(without it: continuous, until SIGTERM or Ctrl-C)")
@click.option("--table", default=None,
              help="only this table, on a slot, publication and offsets of its own (<slot>_<table>)")
@click.option("--drop-slot", is_flag=True,
              help="drop the replication slot and publication capture created, and its offsets; then exit")
@click.option("--flush-size", type=click.IntRange(min=1), default=None,
              help="records per landed file (default: source.database.flush_size)")
@click.option("--rotate-seconds", type=click.FloatRange(min=0.5), default=60.0, show_default=True,
              help="continuous: close a file open this long (the sink's rotate.schedule.interval.ms)")
@click.option("--timeout", "timeout", type=float, default=None, help="--once: give up after this many seconds")
@output_option
@click.pass_context
def capture_cmd(ctx, once, table, drop_slot, flush_size, rotate_seconds, timeout, output):
    """Land the database's changes as Kafka Connect S3-sink Avro files under source.root (Debezium)."""
    from ..capture import capture as cap

    if once and drop_slot:
        raise click.UsageError("give one of --once or --drop-slot")
    pipeline = pipeline_from(ctx)
    if table is not None:
        pipeline = cap.for_table(pipeline, table)
    if drop_slot:
        dropped = cap.drop_slot(pipeline, progress)
        if output == "json":
            emit(dropped, "json")
        return
    if once:
        result = cap.capture_once(pipeline, progress=progress, flush_size=flush_size, timeout_seconds=timeout)
    else:
        with cap.stop_on_signals(progress) as stop:
            result = cap.capture_continuous(pipeline, stop, progress=progress, flush_size=flush_size,
                                            rotate_seconds=rotate_seconds)
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


@click.group("source")
def source():
    """The source database of the pipeline (source.database)."""


@source.command("check")
@click.option("--table", default=None, help="only this table's checks (default: every table)")
@output_option
@click.pass_context
def source_check_cmd(ctx, table, output):
    """Is the database ready for capture? Each failing check prints its fix; exit 11 on any failure."""
    from ..capture.check import source_check
    from ..errors import SourceError
    from ..output import Output, Section, render

    checks = source_check(pipeline_from(ctx), table)
    failed = [c.name for c in checks if c.status == "fail"]
    rows = [c.to_dict() for c in checks]
    fixes = [f"{c.status} {c.name}: {c.fix}" for c in checks if c.fix and c.status != "ok"]
    render(Output(text=[Section(rows, ["name", "status", "detail"]), *(["fixes:"] + fixes if fixes else [])],
                  json={"ok": not failed, "checks": rows}, csv=Section(rows)), output)
    if failed:
        raise SourceError(f"source check: {len(failed)} check(s) failed: {', '.join(failed)}")


@click.group("connectors")
def connectors():
    """Kafka Connect configs of the pipeline: Debezium PostgreSQL source and S3 sink."""


@connectors.command("render")
@click.option("--seed", is_flag=True, help="seed 001's own connector JSON instead (to diff against)")
@click.option("--out", "out", default=None, type=click.Path(file_okay=False),
              help="write <name>.json (the PUT /connectors/<name>/config body) per connector here")
@click.pass_context
def connectors_render_cmd(ctx, seed, out):
    """Print [{name, config}, ...] (POST /connectors bodies), or write one config file per connector."""
    import json
    from pathlib import Path

    from ..capture.connectors import ENV_PROVIDER, render_connectors

    rendered = render_connectors(pipeline_from(ctx), seed=seed)
    if any("${env:" in str(c["config"].get("database.password", "")) for c in rendered):
        progress("the password is a reference: the Connect worker needs "
                 + ", ".join(f"{k}={v}" for k, v in ENV_PROVIDER.items()) + " and the variable set")
    if out is None:
        emit(rendered, "json")
        return
    Path(out).mkdir(parents=True, exist_ok=True)
    for c in rendered:
        path = Path(out) / f"{c['name']}.json"
        path.write_text(json.dumps(c["config"], indent=2) + "\n")
        click.echo(str(path))
