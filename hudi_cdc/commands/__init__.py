"""One module per command family; each exposes click commands that call the library."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

if TYPE_CHECKING:  # pydantic is imported only when a command needs the pipeline file
    from ..config import Pipeline


def pipeline_from(ctx: click.Context) -> "Pipeline":
    """Load (once per invocation) the pipeline file chosen with --config."""
    from ..config import load_pipeline

    obj = ctx.find_root().obj
    if "pipeline" not in obj:
        obj["pipeline"] = load_pipeline(obj.get("config"))
    return obj["pipeline"]
