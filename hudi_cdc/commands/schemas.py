"""`hudi-cdc schemas register | show | check | list`: the tables' value schemas in the registry."""

from __future__ import annotations

import json
from pathlib import Path

import click

from ..output import emit, output_option
from . import pipeline_from

_table_option = click.option("--table", "-t", "tables", multiple=True,
                             help="pipeline table (repeatable); default: every table")
_avsc_option = click.option("--avsc", type=click.Path(exists=True, dir_okay=False, path_type=Path), default=None,
                            help="take the schema from this .avsc instead of the landed Avro files (one --table)")
_registry_option = click.option("--registry", "registry_url", default=None, metavar="URL",
                                help="ccompat base URL (default: source.schema_registry of the pipeline file)")


def _client(ctx, registry_url):
    from ..registry import RegistryClient, credentials

    pipeline = pipeline_from(ctx)
    if registry_url:
        return pipeline, RegistryClient(registry_url, auth=credentials(pipeline))
    return pipeline, RegistryClient.from_pipeline(pipeline)


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
    from ..registry import register_pipeline

    pipeline, client = _client(ctx, registry_url)
    with client:
        rows = register_pipeline(client, pipeline, tables, avsc, compatibility.upper())
    emit(rows, output, columns=["table", "subject", "id", "version", "url"])


@schemas.command("check")
@_table_option
@_avsc_option
@_registry_option
@output_option
@click.pass_context
def check_cmd(ctx, tables, avsc, registry_url, output):
    """Ask the registry whether each table's schema is compatible with its latest version (exit 7 if not)."""
    from ..registry import IncompatibleSchema, check_pipeline

    pipeline, client = _client(ctx, registry_url)
    with client:
        rows = check_pipeline(client, pipeline, tables, avsc)
    emit(rows, output, columns=["table", "subject", "compatible", "messages"])
    bad = [r["subject"] for r in rows if not r["compatible"]]
    if bad:
        raise IncompatibleSchema(f"incompatible with the registered schema: {', '.join(bad)}", status=409)


@schemas.command("show")
@click.argument("table_or_subject")
@click.option("--version", "version", default="latest", show_default=True)
@_registry_option
@output_option
@click.pass_context
def show_cmd(ctx, table_or_subject, version, registry_url, output):
    """Show a registered schema: a pipeline table's <topic>-value subject, or any subject by name."""
    from ..registry import subject_for

    pipeline, client = _client(ctx, registry_url)
    subject = subject_for(pipeline, table_or_subject) if table_or_subject in pipeline.tables else table_or_subject
    with client:
        sv = client.get(subject, version)
        versions = client.versions(subject)
    if output == "json":
        emit({"subject": sv.subject, "version": sv.version, "id": sv.id, "versions": versions,
              "url": client.subject_url(subject, sv.version), "schema": sv.parsed}, "json")
        return
    schema = sv.parsed
    fields = schema.get("fields", []) if isinstance(schema, dict) else []
    click.echo(f"subject {sv.subject}  version {sv.version} of {versions}  id {sv.id}")
    click.echo(f"url     {client.subject_url(subject, sv.version)}")
    if fields:
        emit([{"field": f["name"], "type": json.dumps(f["type"]) if not isinstance(f["type"], str) else f["type"],
               "default": json.dumps(f["default"]) if "default" in f else ""} for f in fields], output)
    else:
        click.echo(json.dumps(schema, indent=2))


@schemas.command("list")
@_registry_option
@output_option
@click.pass_context
def list_cmd(ctx, registry_url, output):
    """Every subject in the registry with its versions; marks the pipeline's own subjects."""
    from ..registry import subject_for

    pipeline, client = _client(ctx, registry_url)
    ours = {subject_for(pipeline, t): t for t in pipeline.tables}
    with client:
        rows = [{"subject": s, "versions": ",".join(str(v) for v in client.versions(s)), "table": ours.get(s, "")}
                for s in sorted(client.subjects())]
    emit(rows, output, columns=["subject", "versions", "table"])
