"""init, render, sample, bootstrap, stream, show, demo: each a few lines over the library."""

from __future__ import annotations

import json
from pathlib import Path

import click

from .. import pipeline as pipe
from .. import render as rnd
from .. import sample as smp
from ..config import TYPE_SUFFIX, uri_to_path
from ..errors import ConfigError
from ..output import emit, output_option, progress
from . import pipeline_from

TYPE_CHOICE = click.Choice(["cow", "mor"])
BY_SUFFIX = {v: k for k, v in TYPE_SUFFIX.items()}

SAMPLE_PIPELINE = """\
# hudi-cdc pipeline file for the embedded MoMA sample (see README: "The pipeline file").
pipeline: moma
hudi: {{version: "{version}"}}
source:
  root: landing/topics          # <root>/<topic>/partition=0/*.avro, as the Kafka Connect S3 sink writes
{registry}lake:
  root: lake                    # tables at lake/<table>_cow and lake/<table>_mor
  hive_database: moma           # Hive databases moma_cow / moma_mor
{metastore}spark:
  master: local[2]
  driver_memory: 2g
  shuffle_partitions: 4
tables:
  artists:
    topic: moma.public.artists
    record_key: artist_id
    ordering_field: __lsn
    partition_field: nationality
    table_types: [COPY_ON_WRITE, MERGE_ON_READ]
    deletes: hard
  artworks:
    topic: moma.public.artworks
    record_key: artwork_id
    ordering_field: __lsn
    partition_field: classification
    table_types: [COPY_ON_WRITE, MERGE_ON_READ]
    deletes: hard
"""


def sample_pipeline_text(registry: str = "", metastore: str = "") -> str:
    from ..config import CURRENT_HUDI

    return SAMPLE_PIPELINE.format(
        version=CURRENT_HUDI,
        registry=f"  schema_registry: {registry}\n" if registry else "",
        metastore=f"  hive_metastore: {metastore}\n" if metastore else "",
    )


@click.command("init")
@click.argument("directory", default=".", type=click.Path(file_okay=False))
@click.option("--registry", default="", help="schema registry ccompat URL to put in the file")
@click.option("--metastore", default="", help="Hive metastore thrift URI to put in the file")
@click.option("--force", is_flag=True, help="overwrite an existing pipeline file")
def init_cmd(directory, registry, metastore, force):
    """Write hudi-cdc.yaml for the embedded MoMA sample into DIRECTORY."""
    d = Path(directory)
    d.mkdir(parents=True, exist_ok=True)
    path = d / "hudi-cdc.yaml"
    if path.exists() and not force:
        progress(f"{path} exists; keeping it (use --force to overwrite)")
        return
    path.write_text(sample_pipeline_text(registry, metastore))
    progress(f"wrote {path}")


@click.command("render")
@click.option("--out", "out", default="properties", show_default=True, type=click.Path(file_okay=False),
              help="directory for the properties files")
@click.option("--props-base", default=None, help="where jobs will read the properties from (default: --out)")
@click.option("--emr-steps", is_flag=True, help="print EMR step definitions (JSON) instead")
@output_option
@click.pass_context
def render_cmd(ctx, out, props_base, emr_steps, output):
    """Write the properties files and print each job's spark-submit argv."""
    p = pipeline_from(ctx)
    target = ctx.find_root().obj["target"]
    if emr_steps:
        from ..runners.emr import steps_json

        click.echo(json.dumps(steps_json(p, _all_jobs(p)), indent=2))
        return
    written = rnd.write_properties(p, Path(out))
    for w in written:
        progress(f"wrote {w}")
    base = props_base or f"file://{Path(out).resolve()}"
    rows = []
    for job in _all_jobs(p):
        props_uri = f"{base.rstrip('/')}/{rnd.props_filename(p, job.table, job.table_type)}"
        if target == "local":
            from ..runners.local import job_script

            argv = rnd.local_argv(p, [job], Path(out), ["<hudi-spark-bundle.jar>", "<spark-avro.jar>"], job_script())
        else:
            argv = rnd.streamer_argv(p, job.table, job.table_type, job.op, target=target, props_uri=props_uri,
                                     continuous=job.continuous)
        rows.append({"job": job.name, "argv": argv})
    if output == "json":
        emit(rows, "json")
    else:
        for r in rows:
            click.echo(f"# {r['job']}")
            click.echo(" \\\n  ".join(_shell_lines(r["argv"])))


def _shell_lines(argv):
    """For people: one flag and its value per line (the argv itself stays a list)."""
    import shlex

    lines, i = [], 0
    while i < len(argv):
        a = shlex.quote(argv[i])
        if argv[i].startswith("--") and i + 1 < len(argv) and not argv[i + 1].startswith("--"):
            a += " " + shlex.quote(argv[i + 1])
            i += 1
        lines.append(a)
        i += 1
    return lines


def _all_jobs(p):
    jobs = [rnd.Job(t, tt, "BULK_INSERT") for t, tt in p.targets()]
    jobs += [rnd.Job(t, tt, "UPSERT", continuous=True) for t, tt in p.targets()]
    return jobs


def _landing_root(ctx, directory):
    if directory:
        return Path(directory)
    try:
        return uri_to_path(pipeline_from(ctx).source_root)
    except ConfigError:
        return Path("landing/topics")


@click.command("sample")
@click.argument("dataset", type=click.Choice(["moma"]))
@click.argument("directory", required=False, type=click.Path(file_okay=False))
@click.option("--stage", type=click.Choice(["snapshot", "changes", "all"]), default="snapshot", show_default=True,
              help="snapshot (op=r) files, the seed's change files, or both")
@click.option("--count", type=int, default=None, help="with --stage changes: land only the next N change files")
@click.pass_context
def sample_cmd(ctx, dataset, directory, stage, count):
    """Land the MoMA sample under DIRECTORY (default: the pipeline's source.root)."""
    root = _landing_root(ctx, directory)
    if stage in ("snapshot", "all"):
        smp.land_snapshot(root, progress=progress)
    if stage in ("changes", "all"):
        written = smp.land_changes(root, count, progress=progress)
        if not written:
            progress("no change files left to land")


@click.command("bootstrap")
@click.option("--table", default=None, help="only this table (default: every table)")
@click.option("--force", is_flag=True, help="rebuild a table that exists already")
@click.option("--dry-run", is_flag=True, help="print what would run")
@output_option
@click.pass_context
def bootstrap_cmd(ctx, table, force, dry_run, output):
    """BULK_INSERT (with --filter-dupes) everything landed so far, every table and table type."""
    p = pipeline_from(ctx)
    results = pipe.bootstrap(p, table, force=force, target=ctx.find_root().obj["target"], dry_run=dry_run,
                             progress=progress)
    _report(results, output)


@click.command("stream")
@click.option("--table", required=True, help="the table to stream")
@click.option("--type", "ttype", type=TYPE_CHOICE, default=None, help="only the cow or mor table")
@click.option("--once", is_flag=True, help="one sync round, then exit (tests, schedulers)")
@click.option("--dry-run", is_flag=True, help="print what would run")
@output_option
@click.pass_context
def stream_cmd(ctx, table, ttype, once, dry_run, output):
    """Continuous UPSERT of newly landed files, starting where the last commit's checkpoint ended."""
    p = pipeline_from(ctx)
    results = pipe.stream(p, table, once=once, table_type=BY_SUFFIX.get(ttype), target=ctx.find_root().obj["target"],
                          dry_run=dry_run, progress=progress)
    _report(results, output)


def _report(results, output):
    if output == "json":
        emit(results, "json")
        return
    rows = [{"table": r.get("table"), "operation": r.get("operation"), "files": len(r.get("files") or []),
             "records_in": r.get("records_in"), "written": r.get("records_written"), "deletes": r.get("deletes"),
             "commit": r.get("commit") or ("-" if r.get("skipped") else None)}
            for r in results if not r.get("dry_run")]
    if rows:
        emit(rows, "text")


@click.command("show")
@click.option("--table", required=True)
@click.option("--type", "ttype", type=TYPE_CHOICE, default="cow", show_default=True)
@click.option("--key", "keys", multiple=True, help="record key value(s) to show (default: all rows)")
@click.option("--columns", default=None, help="comma-separated columns")
@output_option
@click.pass_context
def show_cmd(ctx, table, ttype, keys, columns, output):
    """Current rows of a table, read with hudi-rs (no JVM)."""
    from ..reader import current_rows

    p = pipeline_from(ctx)
    rows = current_rows(p, table, BY_SUFFIX[ttype], keys=list(keys), columns=columns.split(",") if columns else None)
    emit(rows, output)


@click.command("demo")
@click.argument("directory", default="demo", type=click.Path(file_okay=False))
@click.option("--registry", default="", help="use this schema registry (ccompat URL)")
@click.option("--metastore", default="", help="sync to this Hive metastore (thrift URI)")
@click.pass_context
def demo_cmd(ctx, directory, registry, metastore):
    """The whole sample flow in DIRECTORY: sample -> bootstrap -> changes -> stream --once -> rows."""
    from ..demo import run_demo

    run_demo(Path(directory), registry=registry, metastore=metastore, progress=progress)
