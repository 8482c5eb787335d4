"""`hudi-cdc query as-of|history|changes`: time travel, the history of a record and incremental
reads over a pipeline table (--table NAME --type cow|mor) or any Hudi table (--path URI), through
Spark's Hudi datasource (--engine spark) or hudi-rs without a JVM (--engine native)."""

from __future__ import annotations

import click

from hudi_cdc.cli import views
from hudi_cdc.cli.commands import located_table, pipeline_from, table_path_options
from hudi_cdc.cli.output import output_option, progress, render


def _split(columns: str | None) -> list[str] | None:
    return [c.strip() for c in columns.split(",") if c.strip()] if columns else None


def query_options(f):
    f = output_option(f)
    f = click.option("--columns", metavar="A,B", help="only these record columns (the key is always shown)")(f)
    f = click.option("--engine", type=click.Choice(["spark", "native"]), default="spark", show_default=True,
                     help="spark: Hudi's Spark datasource; native: hudi-rs, no JVM")(f)
    return table_path_options(f)


def _open(ctx, path, table, table_type):
    from hudi_cdc.query import open_query_table

    return open_query_table(located_table(ctx, path, table, table_type))


def _spark(ctx, engine, table):
    """The Spark session for --engine spark (the pipeline's Spark settings with --table)."""
    from hudi_cdc.query.session import spark_for

    return spark_for(engine, pipeline_from(ctx) if table and engine == "spark" else None, progress)


@click.group("query")
def query():
    """Time travel (as-of), the history of a record, incremental reads (changes).

    TIME is a Hudi instant (yyyyMMddHHmmssSSS), an ISO time (2021-12-30T08:00:00-05:00; UTC
    when no zone is given) or a date (2021-12-30, midnight UTC). "As of T" shows every commit
    that had completed by T; an instant equal to a commit's own instant names that commit.
    """


@query.command("as-of")
@click.option("--at", "at", required=True, metavar="TIME", help="the moment to read the table as of")
@click.option("--where", metavar="SQL", help="row filter, e.g. \"artist_id = 299\"")
@click.option("--read-optimized", is_flag=True, help="MoR: only compacted base files (what _ro readers see)")
@query_options
@click.pass_context
def as_of_cmd(ctx, at, where, read_optimized, path, table, table_type, engine, columns, output):
    """The table as it was at TIME."""
    from hudi_cdc.query import as_of

    qt = _open(ctx, path, table, table_type)
    commit = qt.commit_at(at)  # bad times fail before Spark starts
    with _spark(ctx, engine, table) as spark:
        res = as_of(qt, at, spark=spark, engine=engine, where=where, read_optimized=read_optimized,
                    columns=_split(columns))
    render(views.as_of(qt, at, commit, res, read_optimized), output)


@query.command("history")
@click.option("--key", "key", required=True, metavar="VALUE", help="record key (f1=v1,f2=v2 for composite keys)")
@query_options
@click.pass_context
def history_cmd(ctx, key, path, table, table_type, engine, columns, output):
    """Every state of one record, one row per commit that touched it, oldest first (the delete too)."""
    from hudi_cdc.query import history
    from hudi_cdc.query.filters import key_conditions

    qt = _open(ctx, path, table, table_type)
    key_conditions(key, qt.record_keys, qt.column_types)  # a bad key fails before Spark starts
    with _spark(ctx, engine, table) as spark:
        res = history(qt, key, spark=spark, engine=engine, columns=_split(columns))
    render(views.history(qt, key, res), output)


@query.command("changes")
@click.option("--since", "since", required=True, metavar="TIME", help="changes committed after this time")
@click.option("--until", "until", metavar="TIME", help="... and up to this time (default: the latest commit)")
@click.option("--where", metavar="SQL", help="row filter, e.g. \"nationality = 'German'\"")
@query_options
@click.pass_context
def changes_cmd(ctx, since, until, where, path, table, table_type, engine, columns, output):
    """What changed after --since and up to --until: the latest version of each upserted record
    (an incremental read; a point-in-time read with --until). Deleted records have no row: the
    commits' delete counts are printed from their metadata."""
    from hudi_cdc.query import changes

    qt = _open(ctx, path, table, table_type)
    qt.range(since, until)  # bad times fail before Spark starts
    with _spark(ctx, engine, table) as spark:
        res = changes(qt, since, until, spark=spark, engine=engine, where=where, columns=_split(columns))
    render(views.changes(qt, res), output)


@query.command("consistent")
@click.option("--type", "table_type", type=click.Choice(["cow", "mor"]), default="cow", show_default=True,
              help="which tables: the CoW or the MoR ones")
@click.option("--cut", type=int, default=None, help="this cut instead of the newest every table committed")
@output_option
@click.pass_context
def consistent_cmd(ctx, table_type, cut, output):
    """The newest consistent point (capture's transaction cut every table committed: its LSN and source
    time) and, per table, the SQL that reads the tables there: a WHERE on the validity range of history
    tables (Trino, Athena, Hive, Spark), Spark's TIMESTAMP AS OF for current-state tables."""
    from hudi_cdc.cli.locate import BY_SUFFIX
    from hudi_cdc.query.consistent_sql import consistent_sql

    render(views.consistent(consistent_sql(pipeline_from(ctx), BY_SUFFIX[table_type], cut)), output)
