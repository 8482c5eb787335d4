"""`hudi-cdc add-table`: register, bootstrap alone and stream one more table while others stream."""

from __future__ import annotations

from pathlib import Path

import click

from hudi_cdc.cli import views
from hudi_cdc.cli.commands import target_of
from hudi_cdc.cli.output import output_option, progress, render

TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}


@click.command("add-table")
@click.argument("name")
@click.option("--topic", default=None, help="its CDC topic (a new table)")
@click.option("--record-key", default=None, help="record key column(s), comma-separated (a new table)")
@click.option("--partition-field", default=None, help="partition column (a new table)")
@click.option("--type", "types", type=click.Choice(sorted(TYPES)), multiple=True,
              help="table type(s) to write (a new table; default: cow and mor)")
@click.option("--stream", "then_stream", is_flag=True,
              help="after the bootstrap, stream the table continuously in this process")
@output_option
@click.pass_context
def add_table_cmd(ctx, name, topic, record_key, partition_field, types, then_stream, output):
    """Add table NAME to the pipeline file (or take it from there), register its schema, bootstrap it
    alone from what has landed and hand over to `stream`; other tables' streams are not touched."""
    from hudi_cdc.config import DEFAULT_CONFIG
    from hudi_cdc.pipeline.onboard import add_table

    settings = None
    if topic or record_key or partition_field or types:
        keys = [k.strip() for k in (record_key or "").split(",") if k.strip()]
        settings = {"topic": topic, "record_key": keys[0] if len(keys) == 1 else keys}
        if partition_field:
            settings["partition_field"] = partition_field
        if types:
            settings["table_types"] = [TYPES[t] for t in types]
    config = Path(ctx.find_root().obj.get("config") or DEFAULT_CONFIG)
    out = add_table(config, name, settings, stream=then_stream, target=target_of(ctx), progress=progress)
    render(views.job_results(out["bootstrap"] + out.get("stream", [])), output)
