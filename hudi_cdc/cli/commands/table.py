"""`hudi-cdc table downgrade`: the pipeline's tables converted to hudi.table_version (docs/table-version.md)."""

from __future__ import annotations

import click

from hudi_cdc.cli.commands import pipeline_from
from hudi_cdc.cli.output import Output, output_option, progress, render

TYPES = {"cow": "COPY_ON_WRITE", "mor": "MERGE_ON_READ"}
COLUMNS = ["table", "table_type", "found", "wanted", "action", "done", "seconds", "base_path"]


@click.group("table")
def table() -> None:
    """Table-level maintenance of the pipeline's Hudi tables."""


@table.command("downgrade")
@click.option("--table", "name", default=None, help="one table (default: every table)")
@click.option("--type", "ttype", type=click.Choice(sorted(TYPES)), default=None, help="one table type")
@click.option("--dry-run", is_flag=True, help="say which tables would be converted, convert none")
@output_option
@click.pass_context
def downgrade_cmd(ctx, name, ttype, dry_run, output):
    """Convert tables written at a newer Hudi table version (9, 8) to the pipeline's hudi.table_version with
    Hudi's own downgrade, each under its writer lock; tables already there are left alone."""
    from hudi_cdc.pipeline.downgrade import downgrade

    done = downgrade(pipeline_from(ctx), name, TYPES.get(ttype), dry_run=dry_run, progress=progress)
    render(Output.rows([c.as_dict() for c in done], COLUMNS), output)
