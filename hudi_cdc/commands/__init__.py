"""One module per command family; each command is options -> one library call -> an Output rendered
by hudi_cdc/output.py. Nothing outside cli.py and this package imports it."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # pydantic is imported only when a command needs the pipeline file
    from ..config import Pipeline


def pipeline_from(ctx: click.Context) -> Pipeline:
    """Load (once per invocation) the pipeline file chosen with --config."""
    from ..config import load_pipeline

    obj = ctx.find_root().obj
    if "pipeline" not in obj:
        obj["pipeline"] = load_pipeline(obj.get("config"))
    return obj["pipeline"]


def pipeline_loader(ctx: click.Context):
    """pipeline_from(ctx), deferred: for library calls that need the pipeline file only sometimes."""
    return lambda: pipeline_from(ctx)


def target_of(ctx: click.Context) -> str:
    return ctx.find_root().obj["target"]
