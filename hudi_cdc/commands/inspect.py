"""`hudi-cdc inspect ...`: commits, stats, compactions, files, schema and timeline of a Hudi table,
read with hudi-rs (no JVM). A table is named by --path, or by pipeline table name and --type."""

from __future__ import annotations

import functools
from typing import Any, Dict, List, Optional

import click

from ..config import TYPE_SUFFIX
from ..output import emit, output_option
from . import pipeline_from

_TYPES = {suffix: table_type for table_type, suffix in TYPE_SUFFIX.items()}  # cow -> COPY_ON_WRITE


def table_options(f):
    @click.option("--path", "path", metavar="URI", help="table base path (local path, file:// or s3://)")
    @click.option("--table", "table", metavar="NAME", help="a table of the pipeline file")
    @click.option("--type", "table_type", type=click.Choice(sorted(_TYPES)), help="cow or mor (with --table)")
    @output_option
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)

    return wrapper


def resolve_path(ctx: click.Context, path: Optional[str], table: Optional[str], table_type: Optional[str]) -> str:
    if path and table:
        raise click.UsageError("pass either --path or --table, not both")
    if path:
        return path
    if not table:
        raise click.UsageError("name a table: --path URI, or --table NAME [--type cow|mor]")
    pipeline = pipeline_from(ctx)
    types = pipeline.table(table).table_types
    if table_type:
        wanted = _TYPES[table_type]
        if wanted not in types:
            raise click.UsageError(f"table {table!r} has no {table_type} table in {pipeline.source_file}")
    elif len(types) == 1:
        wanted = types[0]
    else:
        raise click.UsageError(f"table {table!r} is written as {' and '.join(TYPE_SUFFIX[t] for t in types)}: "
                               "pass --type cow|mor")
    return pipeline.base_path(table, wanted)


def _open(ctx, path, table, table_type):
    from ..inspect import open_table

    return open_table(resolve_path(ctx, path, table, table_type))


def human_bytes(n: Any) -> str:
    """Like Hudi's NumericUtils.humanReadableByteCount: 1024-based, one decimal."""
    if n is None:
        return "null"
    n = float(n)
    if n < 1024:
        return f"{int(n)} B" if n == int(n) else f"{n:.1f} B"
    for unit in "KMGTPE":
        n /= 1024
        if n < 1024 or unit == "E":
            return f"{n:.1f} {unit}B"
    return str(n)


def _text_rows(rows: List[Dict[str, Any]], columns: List[str], byte_columns=()) -> List[Dict[str, Any]]:
    return [{c: (human_bytes(r.get(c)) if c in byte_columns else r.get(c)) for c in columns} for r in rows]


@click.group("inspect")
def inspect():
    """Commits, write amplification, compactions, file slices and schema of a Hudi table (no JVM)."""


@inspect.command("commits")
@table_options
@click.pass_context
def commits_cmd(ctx, path, table, table_type, output):
    """Completed commits, delta commits and replace commits, oldest first (hudi-cli `commits show`)."""
    from ..inspect import commit_rows

    rows = commit_rows(_open(ctx, path, table, table_type))
    if output != "text":
        columns = None if output == "json" else [c for c in rows[0] if c != "partitions"]
        emit(rows, output, columns)
        return
    cols = ["requested_time", "completion_time", "action", "operation", "records_written", "records_inserted",
            "records_updated", "records_deleted", "files_added", "files_updated", "bytes_written",
            "partitions_written"]
    emit(_text_rows(rows, cols, {"bytes_written"}), "text")


@inspect.command("stats")
@table_options
@click.pass_context
def stats_cmd(ctx, path, table, table_type, output):
    """Write amplification per commit and overall (hudi-cli `stats wa`), and file sizes."""
    from ..inspect import file_size_stats, write_amplification

    t = _open(ctx, path, table, table_type)
    wa = write_amplification(t)
    sizes = file_size_stats(t)
    if output == "json":
        emit({"table": t.describe(), "write_amplification": wa, "file_sizes": sizes}, "json")
        return
    if output == "csv":
        emit(wa, "csv")
        return
    click.echo("Write amplification (records written / records upserted; commit and replacecommit instants):")
    emit(_text_rows(wa, ["requested_time", "action", "records_upserted", "records_written", "write_amplification",
                         "bytes_written"], {"bytes_written"}))
    click.echo("File sizes (latest file slices):")
    size_rows = [dict(kind=k, **v) for k, v in sizes.items()]
    emit(_text_rows(size_rows, ["kind", "files", "total_bytes", "min", "p10", "p50", "avg", "p95", "max", "std_dev"],
                    {"total_bytes", "min", "p10", "p50", "avg", "p95", "max", "std_dev"}))


@inspect.command("compactions")
@table_options
@click.pass_context
def compactions_cmd(ctx, path, table, table_type, output):
    """Completed and pending compactions of a MERGE_ON_READ table (hudi-cli `compactions show all`)."""
    from ..inspect import compaction_rows

    rows = compaction_rows(_open(ctx, path, table, table_type))
    if output == "text" and not rows:
        click.echo("(no compactions in the active timeline)")
        return
    emit(rows if output != "text" else _text_rows(rows, list(rows[0]), {"log_bytes"}), output)


@inspect.command("files")
@table_options
@click.pass_context
def files_cmd(ctx, path, table, table_type, output):
    """File slices of the latest snapshot per partition, with base and log files and sizes."""
    from ..inspect import file_slice_rows

    rows = file_slice_rows(_open(ctx, path, table, table_type))
    if output == "json":
        emit(rows, "json")
        return
    cols = ["partition", "file_id", "base_instant", "base_bytes", "log_files", "log_bytes", "total_bytes"]
    if output == "csv":
        emit(rows, "csv", cols)
        return
    emit(_text_rows(rows, cols, {"base_bytes", "log_bytes", "total_bytes"}))


@inspect.command("schema")
@table_options
@click.pass_context
def schema_cmd(ctx, path, table, table_type, output):
    """The table's current schema (Arrow and Avro) and its table config (hudi-cli `desc`)."""
    from ..inspect import schema_info

    info = schema_info(_open(ctx, path, table, table_type))
    if output == "json":
        emit(info, "json")
        return
    if output == "csv":
        emit(info["fields"], "csv")
        return
    t = info["table"]
    click.echo(f"{t['name']}: {t['type']}, table version {t['version']}, {t['path']}")
    click.echo(f"partition fields: {', '.join(t['partition_fields']) or '(none)'}")
    emit(info["fields"])
    emit([{"property": k, "value": v} for k, v in info["config"].items()])


@inspect.command("timeline")
@table_options
@click.pass_context
def timeline_cmd(ctx, path, table, table_type, output):
    """Every instant of the active timeline (pending ones, rollbacks, cleans, indexing included)."""
    from ..inspect import open_table, read_timeline

    t = open_table(resolve_path(ctx, path, table, table_type))
    rows = [i.to_dict() for i in read_timeline(t)]
    if output == "text" and not rows:
        click.echo("(the timeline is empty)")
        return
    emit(rows, output)
