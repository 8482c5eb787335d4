"""`hudi-cdc hive tables | partitions | describe | sql` over PyHive, and `hudi-cdc sync`."""

from __future__ import annotations

import click

from hudi_cdc.cli.commands import pipeline_from, pipeline_loader
from hudi_cdc.cli.output import Output, output_option, progress, render

_server_option = click.option(
    "--server", default=None, metavar="HOST:PORT",
    help="HiveServer2 endpoint (default: $HUDI_CDC_HIVESERVER2, else the local stack's thrift server)")


@click.group("hive")
def hive():
    """Ask Hive (HiveServer2 / Spark Thrift Server) about the synced tables."""


@hive.command("tables")
@click.option("--database", "-d", "databases", multiple=True,
              help="database (repeatable); default: the pipeline's <db>_cow and <db>_mor")
@_server_option
@output_option
@click.pass_context
def tables_cmd(ctx, databases, server, output):
    """Tables in the pipeline's Hive databases, with what each one is."""
    from hudi_cdc.hive.catalog import client, table_rows

    with client(server) as hs2:
        rows = table_rows(hs2, databases, pipeline_loader(ctx))
    render(Output.rows(rows, ["database", "table", "pipeline_table", "query"]), output)


@hive.command("partitions")
@click.argument("table")
@_server_option
@output_option
@click.pass_context
def partitions_cmd(ctx, table, server, output):
    """Partitions registered in the metastore for TABLE (db.table, or a synced table name)."""
    from hudi_cdc.hive.catalog import client, qualify

    with client(server) as hs2:
        parts = hs2.partitions(qualify(table, pipeline_loader(ctx)))
    render(Output.rows([{"partition": p} for p in parts]), output)


@hive.command("describe")
@click.argument("table")
@_server_option
@output_option
@click.pass_context
def describe_cmd(ctx, table, server, output):
    """Columns, partition columns and table details of TABLE as the metastore has them."""
    from hudi_cdc.hive.catalog import client, qualify

    with client(server) as hs2:
        rows = hs2.describe(qualify(table, pipeline_loader(ctx)))
    render(Output.rows(rows, ["section", "name", "type", "comment"]), output)


@hive.command("sql")
@click.argument("statement")
@_server_option
@output_option
def sql_cmd(statement, server, output):
    """Run one SQL statement through HiveServer2 and print its rows."""
    from hudi_cdc.hive.catalog import client

    with client(server) as hs2:
        rows = hs2.query(statement)
    render(Output.rows(rows), output)


@click.command("sync")
@click.option("--table", "-t", "table", default=None, help="pipeline table (default: every table)")
@click.option("--type", "table_type", default=None, help="only this table type: cow or mor (default: every type)",
              type=click.Choice(["cow", "mor", "COPY_ON_WRITE", "MERGE_ON_READ"], case_sensitive=False))
@click.option("--metastore", default=None, metavar="URI",
              help="thrift://host:port (default: lake.hive_metastore of the pipeline file)")
@output_option
@click.pass_context
def sync_cmd(ctx, table, table_type, metastore, output):
    """Re-sync tables to the Hive metastore (Hudi's HiveSyncTool, hms mode) without writing data."""
    from hudi_cdc.cli.locate import BY_SUFFIX
    from hudi_cdc.hive.sync import sync

    if table_type:
        table_type = BY_SUFFIX.get(table_type.lower(), table_type.upper())  # cow|mor as every command takes it
    rows = sync(pipeline_from(ctx), table, table_type, metastore, progress)
    render(Output.rows(rows, ["table", "type", "hive_tables", "seconds"]), output)
