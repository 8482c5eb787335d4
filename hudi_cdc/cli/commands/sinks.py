"""render-sql and apply: the other CDC sinks (hudi_cdc/sinks), each a few lines over the library."""

from __future__ import annotations

import click

from hudi_cdc.cli.commands import pipeline_from
from hudi_cdc.cli.output import Output, output_option, progress, render

ENGINE_CHOICE = click.Choice(["trino", "spark", "redshift", "athena"])


@click.command("render-sql")
@click.option("--engine", required=True, type=ENGINE_CHOICE, help="SQL dialect and recipe")
@click.option("--table", default=None, help="only this table (default: every table)")
@click.option("--seed", is_flag=True, help="the seed recipe's own statements, for comparison")
@click.pass_context
def render_sql_cmd(ctx, engine, table, seed):
    """Print each table's DDL and apply statements for ENGINE (same semantics as the Hudi tables)."""
    from hudi_cdc.sinks import render_sql

    for st in render_sql(pipeline_from(ctx), engine, table, seed=seed):
        click.echo(st.text())


@click.command("apply")
@click.option("--engine", required=True, type=click.Choice(["iceberg"]), help="where to apply")
@click.option("--table", required=True, help="the table to apply")
@output_option
@click.pass_context
def apply_cmd(ctx, engine, table, output):
    """Apply the landed files not applied yet to an Iceberg table (local Spark, Hadoop catalog)."""
    from hudi_cdc.sinks import iceberg

    res = iceberg.apply(pipeline_from(ctx), table, progress)
    render(Output.rows([{k: v for k, v in res.items() if k != "statements"}]), output)
