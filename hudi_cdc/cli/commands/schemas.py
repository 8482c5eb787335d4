"""`hudi-cdc schemas register | show | check | list`: the tables' value schemas in the registry."""

from __future__ import annotations

from pathlib import Path

import click

from hudi_cdc.cli import views
from hudi_cdc.cli.commands import pipeline_from
from hudi_cdc.cli.output import Output, output_option, render

_table_option = click.option("--table", "-t", "tables", multiple=True,
                             help="pipeline table (repeatable); default: every table")
_avsc_option = click.option("--avsc", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
                            help="take the schema from this .avsc instead of the landed Avro files (one --table)")
_registry_option = click.option("--registry", "registry_url", default=None, metavar="URL",
                                help="ccompat base URL (default: source.schema_registry of the pipeline file)")


@click.group("schemas")
def schemas():
    """Register and check the tables' Avro value schemas (<topic>-value) in the schema registry."""


@schemas.command("register")
@_table_option
@_avsc_option
@click.option("--compatibility", default="BACKWARD", show_default=True,
              type=click.Choice(["BACKWARD", "BACKWARD_TRANSITIVE", "FORWARD", "FORWARD_TRANSITIVE", "FULL",
                                 "FULL_TRANSITIVE", "NONE"], case_sensitive=False),
              help="rule given to a subject registered for the first time")
@_registry_option
@output_option
@click.pass_context
def register_cmd(ctx, tables, avsc, compatibility, registry_url, output):
    """Register each table's value schema (writer schema of its newest landed file, or --avsc)."""
    from hudi_cdc.registry import register_pipeline
    from hudi_cdc.registry.subjects import client_for

    pipeline = pipeline_from(ctx)
    with client_for(pipeline, registry_url) as client:
        rows = register_pipeline(client, pipeline, tables, avsc, compatibility.upper())
    render(Output.rows(rows, ["table", "subject", "id", "version", "url"]), output)


@schemas.command("check")
@_table_option
@_avsc_option
@_registry_option
@output_option
@click.pass_context
def check_cmd(ctx, tables, avsc, registry_url, output):
    """Ask the registry whether each table's schema is compatible with its latest version (exit 7 if not)."""
    from hudi_cdc.registry import check_pipeline
    from hudi_cdc.registry.subjects import client_for, raise_if_incompatible

    pipeline = pipeline_from(ctx)
    with client_for(pipeline, registry_url) as client:
        rows = check_pipeline(client, pipeline, tables, avsc)
    render(Output.rows(rows, ["table", "subject", "compatible", "messages"]), output)
    raise_if_incompatible(rows)


@schemas.command("show")
@click.argument("table_or_subject")
@click.option("--version", "version", default="latest", show_default=True)
@_registry_option
@output_option
@click.pass_context
def show_cmd(ctx, table_or_subject, version, registry_url, output):
    """Show a registered schema: a pipeline table's <topic>-value subject, or any subject by name."""
    from hudi_cdc.registry.subjects import client_for, show, subject_of

    pipeline = pipeline_from(ctx)
    with client_for(pipeline, registry_url) as client:
        sv, versions, url = show(client, subject_of(pipeline, table_or_subject), version)
    render(views.subject(sv, versions, url), output)


@schemas.command("list")
@_registry_option
@output_option
@click.pass_context
def list_cmd(ctx, registry_url, output):
    """Every subject in the registry with its versions; marks the pipeline's own subjects."""
    from hudi_cdc.registry.subjects import client_for, listing

    pipeline = pipeline_from(ctx)
    with client_for(pipeline, registry_url) as client:
        rows = listing(client, pipeline)
    render(Output.rows(rows, ["subject", "versions", "table"]), output)
