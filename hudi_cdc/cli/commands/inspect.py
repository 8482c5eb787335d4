"""`hudi-cdc inspect ...`: commits, stats, compactions, files, schema and timeline of a Hudi table,
read with hudi-rs (no JVM). A table is named by --path, or by pipeline table name and --type."""

from __future__ import annotations

import click

from hudi_cdc.cli import views
from hudi_cdc.cli.commands import located_table, table_path_options
from hudi_cdc.cli.output import output_option, render


def table_options(f):
    return table_path_options(output_option(f))


def _open(ctx, path, table, table_type):
    from hudi_cdc.inspect import open_table

    return open_table(located_table(ctx, path, table, table_type))


@click.group("inspect")
def inspect():
    """Commits, write amplification, compactions, file slices and schema of a Hudi table (no JVM)."""


@inspect.command("commits")
@table_options
@click.pass_context
def commits_cmd(ctx, path, table, table_type, output):
    """Completed commits, delta commits and replace commits, oldest first (hudi-cli `commits show`)."""
    from hudi_cdc.inspect import commit_rows

    render(views.commits(commit_rows(_open(ctx, path, table, table_type))), output)


@inspect.command("stats")
@table_options
@click.pass_context
def stats_cmd(ctx, path, table, table_type, output):
    """Write amplification per commit and overall (hudi-cli `stats wa`), and file sizes."""
    from hudi_cdc.inspect import file_size_stats, write_amplification

    t = _open(ctx, path, table, table_type)
    render(views.stats(t.describe(), write_amplification(t), file_size_stats(t)), output)


@inspect.command("compactions")
@table_options
@click.pass_context
def compactions_cmd(ctx, path, table, table_type, output):
    """Completed and pending compactions of a MERGE_ON_READ table (hudi-cli `compactions show all`)."""
    from hudi_cdc.inspect import compaction_rows

    render(views.compactions(compaction_rows(_open(ctx, path, table, table_type))), output)


@inspect.command("files")
@table_options
@click.pass_context
def files_cmd(ctx, path, table, table_type, output):
    """File slices of the latest snapshot per partition, with base and log files and sizes."""
    from hudi_cdc.inspect import file_slice_rows

    render(views.file_slices(file_slice_rows(_open(ctx, path, table, table_type))), output)


@inspect.command("schema")
@table_options
@click.pass_context
def schema_cmd(ctx, path, table, table_type, output):
    """The table's current schema (Arrow and Avro) and its table config (hudi-cli `desc`)."""
    from hudi_cdc.inspect import schema_info

    render(views.schema(schema_info(_open(ctx, path, table, table_type))), output)


@inspect.command("timeline")
@table_options
@click.pass_context
def timeline_cmd(ctx, path, table, table_type, output):
    """Every instant of the active timeline (pending ones, rollbacks, cleans, indexing included)."""
    from hudi_cdc.inspect import read_timeline

    render(views.timeline([i.to_dict() for i in read_timeline(_open(ctx, path, table, table_type))]), output)
