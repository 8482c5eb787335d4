"""One module per command family; each exposes click commands that call the library."""

import click

from ..config import Pipeline, load_pipeline


def pipeline_from(ctx: click.Context) -> Pipeline:
    """Load (once per invocation) the pipeline file chosen with --config."""
    obj = ctx.find_root().obj
    if "pipeline" not in obj:
        obj["pipeline"] = load_pipeline(obj.get("config"))
    return obj["pipeline"]
