"""One module per command family; each command is options -> one library call -> an Output rendered
by hudi_cdc/cli/output.py. Nothing outside cli.py and this package imports it."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:  # pydantic is imported only when a command needs the pipeline file
    from hudi_cdc.config import Pipeline


def pipeline_from(ctx: click.Context) -> Pipeline:
    """Load (once per invocation) the pipeline file chosen with --config."""
    from hudi_cdc.config import load_pipeline

    obj = ctx.find_root().obj
    if "pipeline" not in obj:
        obj["pipeline"] = load_pipeline(obj.get("config"))
    return obj["pipeline"]


def pipeline_loader(ctx: click.Context):
    """pipeline_from(ctx), deferred: for library calls that need the pipeline file only sometimes."""
    return lambda: pipeline_from(ctx)


def table_path_options(f: Callable[..., Any]) -> Callable[..., Any]:
    """--path, or --table with --type: how a command names one Hudi table (locate.table_path)."""
    from hudi_cdc.cli.locate import BY_SUFFIX

    f = click.option("--type", "table_type", type=click.Choice(sorted(BY_SUFFIX)), help="cow or mor (with --table)")(f)
    f = click.option("--table", "table", metavar="NAME", help="a table of the pipeline file")(f)
    return click.option("--path", "path", metavar="URI", help="table base path (local path, file:// or s3://)")(f)


def located_table(ctx: click.Context, path: str | None, table: str | None, table_type: str | None) -> str:
    """The base path named by --path, or by --table and --type in the pipeline file."""
    from hudi_cdc.cli.locate import table_path

    return table_path(path, table, table_type, pipeline_loader(ctx))


def target_of(ctx: click.Context) -> str:
    return ctx.find_root().obj["target"]
