"""Upload the rendered files (properties, and schemas when the renderer emits them)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ... import render as rnd
from ...config import Pipeline
from .checks import check_no_secrets
from .client import call
from .layout import properties_root, split_s3


def upload_rendered(pipeline: Pipeline, s3: Any, echo: Callable[[str], None], dry_run: bool) -> dict[str, str]:
    """Upload every rendered file to the pipeline's properties root, secrets checked first;
    returns name -> s3 URI."""
    files = rnd.render_properties(pipeline)
    check_no_secrets(pipeline, [(f"properties file {n}", t) for n, t in files.items()])
    root = properties_root(pipeline)
    out: dict[str, str] = {}
    for name in sorted(files):
        uri = f"{root}/{name}"
        bucket, key = split_s3(uri)
        call(s3, "put_object", Bucket=bucket, Key=key, Body=files[name].encode("utf-8"), ContentType="text/plain")
        out[name] = uri
    if not dry_run:
        echo(f"uploaded {len(out)} file(s) to {root}/")
    return out
