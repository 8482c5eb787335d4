"""`hudi-cdc hive tables | partitions | describe | sql` over PyHive, and `hudi-cdc sync`."""

from __future__ import annotations

import click

from ..output import emit, output_option, progress
from . import pipeline_from

_server_option = click.option(
    "--server", default=None, metavar="HOST:PORT",
    help="HiveServer2 endpoint (default: $HUDI_CDC_HIVESERVER2, else the local stack's thrift server)")


def _client(server):
    from ..hive import HiveClient, default_server, parse_server

    host, port = parse_server(server) if server else default_server()
    return HiveClient(host, port)


def _qualify(ctx, name: str) -> str:
    """'artists_rt' or 'moma_mor.artists_rt'; a bare pipeline table name means its CoW table."""
    if "." in name:
        return name
    pipeline = pipeline_from(ctx)
    from ..hive import hive_tables_of

    for row in hive_tables_of(pipeline):
        db, _, tbl = row["hive_table"].partition(".")
        if tbl == name:
            return row["hive_table"]
    return name


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
    from ..hive import hive_tables_of

    known = {}
    if not databases:
        pipeline = pipeline_from(ctx)
        known = {r["hive_table"]: r for r in hive_tables_of(pipeline)}
        databases = sorted({r["hive_table"].split(".")[0] for r in known.values()})
    with _client(server) as client:
        present = set(client.databases())
        rows = []
        for db in databases:
            if db not in present:
                rows.append({"database": db, "table": "", "pipeline_table": "", "query": "(database missing: not synced yet)"})
                continue
            for t in client.tables(db):
                info = known.get(f"{db}.{t}", {})
                rows.append({"database": db, "table": t, "pipeline_table": info.get("table", ""),
                             "query": info.get("query", "")})
    emit(rows, output, columns=["database", "table", "pipeline_table", "query"])


@hive.command("partitions")
@click.argument("table")
@_server_option
@output_option
@click.pass_context
def partitions_cmd(ctx, table, server, output):
    """Partitions registered in the metastore for TABLE (db.table, or a synced table name)."""
    name = _qualify(ctx, table)
    with _client(server) as client:
        parts = client.partitions(name)
    emit([{"partition": p} for p in parts], output)


@hive.command("describe")
@click.argument("table")
@_server_option
@output_option
@click.pass_context
def describe_cmd(ctx, table, server, output):
    """Columns, partition columns and table details of TABLE as the metastore has them."""
    name = _qualify(ctx, table)
    with _client(server) as client:
        rows = client.describe(name)
    emit(rows, output, columns=["section", "name", "type", "comment"])


@hive.command("sql")
@click.argument("statement")
@_server_option
@output_option
def sql_cmd(statement, server, output):
    """Run one SQL statement through HiveServer2 and print its rows."""
    with _client(server) as client:
        rows = client.query(statement)
    emit(rows, output)


@click.command("sync")
@click.option("--table", "-t", "table", default=None, help="pipeline table (default: every table)")
@click.option("--type", "table_type", type=click.Choice(["COPY_ON_WRITE", "MERGE_ON_READ"]), default=None,
              help="only this table type (default: every type of the table)")
@click.option("--metastore", default=None, metavar="URI",
              help="thrift://host:port (default: lake.hive_metastore of the pipeline file)")
@output_option
@click.pass_context
def sync_cmd(ctx, table, table_type, metastore, output):
    """Re-sync tables to the Hive metastore (Hudi's HiveSyncTool, hms mode) without writing data."""
    from ..hive_sync import sync

    pipeline = pipeline_from(ctx)
    rows = sync(pipeline, table, table_type, metastore, progress)
    emit(rows, output, columns=["table", "type", "hive_tables", "seconds"])
